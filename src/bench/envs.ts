import { performance } from 'node:perf_hooks';
import { ConfigError } from '../errors.ts';
import { Prng } from '../envs/prng.ts';
import { createEnv, resolveEnvConfig } from '../envs/registry.ts';
import { sokobanLevel } from '../envs/sokoban/index.ts';

/**
 * `starpo bench envs`: environment steps per second for every preset, and Sokoban levels generated
 * per second, on one core (this thread), as JSON lines. Step time excludes resets, which are
 * timed on their own (a Sokoban reset generates a level).
 */
export interface BenchEnvsOptions {
  /** Seconds per measurement. */
  seconds?: number;
  write?: (line: string) => void;
}

const PRESETS = ['bandit', 'sokoban', 'sokoban-large', 'frozenlake', 'countdown'];

function benchSteps(preset: string, seconds: number): Record<string, number | string> {
  const env = createEnv(preset);
  const actions = env.describe().actions;
  const rng = new Prng(1);
  let steps = 0;
  let resets = 0;
  let resetMs = 0;
  const start = performance.now();
  let now = start;
  while (now - start < seconds * 1000) {
    const t = performance.now();
    env.reset(resets++);
    resetMs += performance.now() - t;
    while (!env.done) {
      // Random actions (Countdown: a fixed expression); a batch of steps between clock reads.
      env.step(actions.length ? (actions[rng.int(actions.length)] as string) : '1+2+3');
      steps++;
    }
    now = performance.now();
  }
  const stepMs = now - start - resetMs;
  const perSecond = (n: number, ms: number): number => Math.round((n / ms) * 1000);
  return {
    env: preset,
    steps_per_s: perSecond(steps, stepMs),
    resets_per_s: perSecond(resets, resetMs),
    steps,
    resets,
  };
}

function benchGeneration(preset: string, seconds: number): Record<string, number | string> {
  const c = resolveEnvConfig(preset);
  if (c.type !== 'sokoban') throw new ConfigError('bench.preset', `${preset} is not a Sokoban preset`);
  let levels = 0;
  const start = performance.now();
  while (performance.now() - start < seconds * 1000) for (let i = 0; i < 16; i++) sokobanLevel(c, levels++);
  const ms = performance.now() - start;
  const size = `${c.width}x${c.height}`;
  const perSecond = Math.round((levels / ms) * 1000);
  return {
    env: preset,
    what: 'generate',
    generator: c.generator,
    size,
    boxes: c.boxes,
    levels_per_s: perSecond,
    levels,
  };
}

export async function benchEnvs(options: BenchEnvsOptions = {}): Promise<void> {
  const seconds = options.seconds ?? 1;
  const write = options.write ?? ((line: string) => process.stdout.write(`${line}\n`));
  for (const preset of PRESETS) write(JSON.stringify({ bench: 'envs', ...benchSteps(preset, seconds) }));
  for (const preset of ['sokoban', 'sokoban-large']) {
    write(JSON.stringify({ bench: 'envs', ...benchGeneration(preset, seconds) }));
  }
}
