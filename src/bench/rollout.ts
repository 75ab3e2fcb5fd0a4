/**
 * `starpo bench rollout`: one iteration's rollout (Sokoban, 5 turns; the full template and the compact one)
 * on the model a run trains from scratch, timed side by side in one process, as JSON lines:
 *   reprefill   every turn prefills its whole context (kvCacheMb 0: what generation did before the cache)
 *   reuse       each row keeps its keys and values between turns and prefills only what was appended
 *   reuse+share the same, and rows sharing a prefix (a group's first prompt, the system prompt) compute it once
 *   pytorch     transformers `generate` (KV cache on) over the same turns: the prompts starpo generated from
 *               and as many new tokens as the turn's longest row wrote (scripts/torch_rollout.py, the same
 *               model's weights exported as a Hugging Face directory, the same threads)
 * The sides run in rounds (their order rotated each round) on the same seeds, so each plays the same
 * trajectories (checked: `sameTrajectories`). Per side: best and median seconds of the whole rollout and of
 * its generate calls, generated tokens/s, episodes/s, and the prompt tokens each iteration prefills. Ratios
 * say how many times faster the cache is than reprefill, and starpo's generation than PyTorch's. A `score`
 * line times the score stage on every row against the rows StarPO-S's filter keeps. Every line carries the
 * machine's load (os.loadavg) before the case.
 *
 * With one thread (STARPO_BENCH_THREADS=1) the CPU seconds are the work itself, which other processes on a
 * shared machine barely disturb; wall-clock ratios on a loaded machine swing by several times.
 *
 *   npx starpo bench rollout   (STARPO_BENCH_SIZE=4x8 groups x rollouts, STARPO_BENCH_ROUNDS=3,
 *                               STARPO_BENCH_THREADS=cores)
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Policy } from '../policy/engine/policy.ts';
import { writeModelConfig } from '../policy/io/config.ts';
import { writeModelWeights } from '../policy/io/sharded.ts';
import { toNamed } from '../policy/model/params.ts';
import { assemble } from '../rl/assemble.ts';
import { resolveConfig, type RlConfig } from '../rl/config.ts';
import { trainedRows } from '../rl/stages/filter.ts';
import { scoreStage } from '../rl/stages/score.ts';
import { rolloutSpec } from '../rl/episode-source.ts';
import { trainSeeds } from '../rl/seeds.ts';
import { createModels } from '../run/models.ts';
import { type Trajectory, rollout } from '../rl/rollout.ts';
import { type GenerationBackend } from '../policy/engine/handle.ts';
import { type RunModel, resolveRunModel } from '../rl/run-model.ts';
import { torchPython } from './engine.ts';

const emit = (line: Record<string, unknown>): void => void process.stdout.write(`${JSON.stringify(line)}\n`);
const round = (x: number, d = 3): number => Math.round(x * 10 ** d) / 10 ** d;
const load = () => os.loadavg().map((x) => round(x, 2));

const CASES: Record<string, string[]> = {
  full: ['template=full', 'maxResponseTokens=64', 'modelContext=4096'],
  compact: ['template=compact', 'maxResponseTokens=24', 'modelContext=2048'],
};
const SIDES: Record<string, { kvCacheMb: number; prefixSharing: boolean }> = {
  reprefill: { kvCacheMb: 0, prefixSharing: false },
  reuse: { kvCacheMb: 1024, prefixSharing: false },
  'reuse+share': { kvCacheMb: 1024, prefixSharing: true },
};

/** An iteration of Sokoban, 5 turns, N groups × M rollouts (StarPO-S's filter; mini-batches that fit any size). */
const base = (size: [number, number]) => [
  'env=sokoban',
  'maxTurns=5',
  `envGroups=${size[0]}`,
  `groupSize=${size[1]}`,
  `miniBatchSize=${size[1]}`,
  `threads=${benchThreads()}`,
];
const benchThreads = () => Number(process.env.STARPO_BENCH_THREADS ?? os.availableParallelism());

interface Turn {
  prompts: number[][];
  newTokens: number;
}
interface Sample {
  rollout: number;
  generate: number;
  cpu: number;
}

/** The policy as a rollout backend that times its generate calls and records each call's prompts and longest answer. */
function recording(policy: Policy, turns: Turn[], time: { generate: number }): GenerationBackend {
  return {
    async generate(req) {
      const t0 = performance.now();
      const out = await policy.generate(req);
      time.generate += (performance.now() - t0) / 1000;
      turns.push({ prompts: req.prompts.map((p) => [...p]), newTokens: Math.max(...out.map((g) => g.tokens.length)) });
      return out;
    },
  };
}

/** A PyTorch process replaying recorded turns (scripts/torch_rollout.py), one JSON line per request. */
async function startTorch(run: RunModel, policy: Policy, threads: number) {
  const python = torchPython();
  if (!python) return null;
  const dir = mkdtempSync(join(os.tmpdir(), 'starpo-bench-rollout-'));
  writeFileSync(join(dir, 'config.json'), writeModelConfig(run.modelConfig));
  await writeModelWeights(dir, Object.entries(toNamed(policy.layout, policy.getParams())));
  const script = fileURLToPath(new URL('../../scripts/torch_rollout.py', import.meta.url));
  const child = spawn(python, [
    script,
    '--model-dir',
    dir,
    '--threads',
    String(threads),
    '--pad-id',
    String(run.tokenizer.padId),
  ]);
  child.stderr.resume();
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => {
    const line = await lines.next();
    if (line.done) throw new Error(`the PyTorch process exited (code ${child.exitCode})`);
    return JSON.parse(line.value) as Record<string, number | string>;
  };
  const info = await next();
  return {
    info,
    replay: async (turns: Turn[]) => (
      child.stdin.write(`${JSON.stringify({ turns })}\n`),
      (await next()) as { seconds: number; cpuSeconds: number }
    ),
    close: () => child.stdin.end(),
  };
}

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { best: round(s[0]), median: round(s[s.length >> 1]) };
};

async function benchCase(name: string, size: [number, number], rounds: number): Promise<void> {
  const loadBefore = load();
  const c = resolveConfig({ overrides: [...base(size), ...CASES[name]] });
  const run = await resolveRunModel(c);
  const threads = benchThreads();
  const policies = Object.fromEntries(
    Object.entries(SIDES).map(([side, o]) => [
      side,
      new Policy({
        config: run.modelConfig,
        seed: c.seed,
        threads,
        spin: threads > 1,
        tokenizer: run.tokenizer,
        kvCacheBytes: o.kvCacheMb * 2 ** 20,
        prefixSharing: o.prefixSharing,
      }),
    ]),
  );
  const spec = rolloutSpec(c, run.chat, trainSeeds(c, 1), c.groupSize, c.trainTemperature, 12345);
  const turns: Turn[] = [];
  const play = async (side: string, record: Turn[] = []) => {
    // as new weights do every iteration: nothing carries over from the last round
    policies[side].clearGenerationCache();
    const time = { generate: 0 };
    const [t0, c0] = [performance.now(), process.cpuUsage()];
    const trajectories = await rollout(spec, recording(policies[side], record, time), run.tokenizer);
    const { user, system } = process.cpuUsage(c0);
    const sample = { rollout: (performance.now() - t0) / 1000, generate: time.generate, cpu: (user + system) / 1e6 };
    return { trajectories, sample };
  };
  const first = await play('reuse+share', turns); // warm-up (compiles the programs) and the turns PyTorch replays
  const torch = await startTorch(run, policies.reprefill, threads);
  const samples: Record<string, Sample[]> = Object.fromEntries([...Object.keys(SIDES), 'pytorch'].map((s) => [s, []]));
  const before = Object.fromEntries(Object.entries(policies).map(([s, p]) => [s, { ...p.generationStats }]));
  let same = true;
  for (let r = 0; r < rounds; r++) {
    const order = Object.keys(SIDES).map((_, i, all) => all[(i + r) % all.length]);
    for (const side of order) {
      const { trajectories, sample } = await play(side);
      same &&= JSON.stringify(trajectories) === JSON.stringify(first.trajectories);
      samples[side].push(sample);
    }
    if (torch && r === 0) {
      // one replay: PyTorch is the slow side here, and its CPU seconds vary little
      const { seconds, cpuSeconds } = await torch.replay(turns);
      samples.pytorch.push({ rollout: NaN, generate: seconds, cpu: cpuSeconds });
    }
  }
  torch?.close();
  const extra = { loadBefore, loadAfter: load(), sameTrajectories: same, torch: torch?.info };
  report(name, first.trajectories, samples, policies, before, rounds, extra);
  await Promise.all(Object.values(policies).map((p) => p.close()));
}

function report(
  name: string,
  trajectories: Trajectory[],
  samples: Record<string, Sample[]>,
  policies: Record<string, Policy>,
  before: Record<string, Policy['generationStats']>,
  rounds: number,
  extra: Record<string, unknown>,
): void {
  const generated = trajectories.reduce((s, t) => s + t.mask.reduce((a, b) => a + b, 0), 0);
  const best = (side: string, k: keyof Sample) => Math.min(...samples[side].map((x) => x[k]));
  for (const [side, xs] of Object.entries(samples)) {
    if (xs.length === 0) continue;
    const s = policies[side] && policies[side].generationStats;
    const per = (k: keyof Policy['generationStats']) => s && round((s[k] - before[side][k]) / rounds);
    emit({
      bench: 'rollout',
      case: name,
      side,
      episodes: trajectories.length,
      generatedTokens: generated,
      ...(side === 'pytorch'
        ? {}
        : {
            rolloutSeconds: stats(xs.map((x) => x.rollout)),
            episodesPerSecond: round(trajectories.length / best(side, 'rollout'), 2),
          }),
      generateSeconds: stats(xs.map((x) => x.generate)),
      generatedTokensPerSecond: round(generated / best(side, 'generate'), 1),
      // the rollout's (starpo) or the generate calls' (PyTorch): the work itself
      cpuSeconds: stats(xs.map((x) => x.cpu)),
      ...(s
        ? {
            promptTokens: per('prompt'),
            prefilledTokens: per('prefilled'),
            sharedTokens: per('shared'),
            reusedTokens: per('reused'),
            meanPrefillSeconds: per('prefillSeconds'),
            meanDecodeSeconds: per('decodeSeconds'),
          }
        : {}),
      ...extra,
    });
  }
  const ratio = (a: string, b: string, k: keyof Sample) => round(best(a, k) / best(b, k), 2);
  emit({
    bench: 'rollout_ratio',
    case: name,
    target: 'reprefill / reuse+share rollout seconds >= 3 (full template)',
    reuseSpeedup: ratio('reprefill', 'reuse', 'rollout'),
    reuseShareSpeedup: ratio('reprefill', 'reuse+share', 'rollout'),
    shareOverReuse: ratio('reuse', 'reuse+share', 'rollout'),
    reuseShareSpeedupCpu: ratio('reprefill', 'reuse+share', 'cpu'),
    ...(samples.pytorch.length
      ? {
          pytorchOverStarpoGenerate: ratio('pytorch', 'reuse+share', 'generate'),
          pytorchOverStarpoCpu: ratio('pytorch', 'reuse+share', 'cpu'),
          pytorchOverReprefillGenerate: ratio('pytorch', 'reprefill', 'generate'),
        }
      : { pytorch: 'skipped: run scripts/install-torch.sh (or set STARPO_TORCH_PYTHON)' }),
    ...extra,
  });
}

/** The score stage (actor and critic) on every row of the rollout against the rows StarPO-S's top-25% filter keeps. */
async function benchScore(size: [number, number], rounds: number): Promise<void> {
  const loadBefore = load();
  const c: RlConfig = resolveConfig({ overrides: [...base(size), ...CASES.compact] });
  const run = await resolveRunModel(c);
  const models = createModels(c, run.modelConfig, run.tokenizer);
  const spec = rolloutSpec(c, run.chat, trainSeeds(c, 1), c.groupSize, c.trainTemperature, 12345);
  const all = assemble(await rollout(spec, models.actor, run.tokenizer));
  const sides = { every: all.batch.trajectories.map((_, i) => i), kept: trainedRows(c, all.batch) };
  const times: Record<string, number[]> = { every: [], kept: [] };
  await scoreStage(c, all, sides.every, models); // compiles
  for (let r = 0; r < rounds; r++) {
    for (const [side, rows] of Object.entries(sides)) {
      const c0 = process.cpuUsage();
      await scoreStage(c, all, rows, models);
      const { user, system } = process.cpuUsage(c0);
      times[side].push((user + system) / 1e6);
    }
  }
  emit({
    bench: 'score',
    rows: { every: sides.every.length, kept: sides.kept.length },
    cpuSeconds: { every: stats(times.every), kept: stats(times.kept) },
    speedup: round(Math.min(...times.every) / Math.min(...times.kept), 2),
    loadBefore,
    loadAfter: load(),
  });
  await Promise.all([models.actor.close(), models.critic?.close()]);
}

export async function benchRollout(): Promise<void> {
  const size = (process.env.STARPO_BENCH_SIZE ?? '4x8').split('x').map(Number) as [number, number];
  const rounds = Number(process.env.STARPO_BENCH_ROUNDS ?? 3);
  const threads = benchThreads();
  emit({ bench: 'machine', cpus: os.availableParallelism(), threads, load: load(), size, rounds });
  for (const name of Object.keys(CASES)) await benchCase(name, size, rounds);
  await benchScore(size, rounds);
}
