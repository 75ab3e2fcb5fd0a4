/**
 * `starpo bench learning`: tiny models trained from scratch on this machine, each run's validation
 * success compared with the environment's oracle ceiling on the same held-out seeds, plus a
 * side-by-side of vanilla StarPO and StarPO-S on the same seeds (stability and Echo-Trap firings).
 * JSON lines, one per run; a benchmark, not a test (wall-clock varies with the machine's load).
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { oracleSuccess } from '../../envs/index.ts';
import { resolveConfig, type RlConfig } from '../../rl/config.ts';
import { trainEmbedded, type IterationReport } from '../../rl/embedded.ts';
import { validationSeeds } from '../../rl/iteration.ts';
import type { PresetName } from '../../rl/presets.ts';

export interface LearningCase {
  name: string;
  preset: PresetName;
  overrides: string[];
  /** Success as a share of the oracle ceiling that counts as reaching the target. */
  target: number;
  /** A supervised warm-start shared by the cases that name it: trained once per bench run, then each case's RL starts from it. */
  warmStart?: WarmStart;
}

export interface WarmStart {
  name: string;
  /** The warm-start run's config (model settings included: the RL runs starting from it use them too). */
  overrides: readonly string[];
}

const SCRATCH = ['valEvery=5', 'valSeeds=128', 'threads=0'];
const SMALL_MODEL = ['modelHidden=96', 'modelFfn=256'];

/** Warm-starts on solver demonstrations (the model settings come with them: RL must use the same). */
const WARM_STARTS = {
  // Measured (128 seeds, temperature 0.5): 1500 steps on 6000 episodes 43.0%, 3000 on 10000 45.3% (oracle 50.0%).
  frozenlake: { name: 'frozenlake', overrides: [...SCRATCH, ...SMALL_MODEL, 'env=frozenlake', 'sftSteps=3000', 'sftPolicy=expert', 'sftEpisodes=10000'] },
  sokoban: { name: 'sokoban', overrides: [...SCRATCH, ...SMALL_MODEL, 'env=sokoban', 'sftSteps=1500', 'sftPolicy=expert', 'sftEpisodes=6000'] },
} as const satisfies Record<string, WarmStart>;

export const LEARNING_CASES: LearningCase[] = [
  { name: 'bandit', preset: 'starpo-s', target: 0.95,
    overrides: [...SCRATCH, 'env=bandit', 'iterations=50', 'sftSteps=60', 'sftPolicy=random', 'sftEpisodes=256', 'lrActor=3e-4', 'lrCritic=1e-3'] },
  // Slips make FrozenLake's returns noisy: lrActor 1e-4 on 2 kept groups drifted from 45% to 38%; 16 groups
  // with half kept and lrActor 1e-5 hold the warm start's level.
  { name: 'frozenlake', preset: 'starpo-s', target: 0.9, warmStart: WARM_STARTS.frozenlake,
    overrides: ['iterations=40', 'lrActor=1e-5', 'lrCritic=1e-3', 'envGroups=16', 'filterFraction=0.5'] },
  { name: 'sokoban', preset: 'starpo-s', target: 0.9, warmStart: WARM_STARTS.sokoban, overrides: ['iterations=40', 'lrActor=1e-4', 'lrCritic=1e-3'] },
  // Asynchronous iterations (iteration i plays version i − 2) beside the on-policy 'sokoban' case, same warm start.
  { name: 'sokoban-async', preset: 'starpo-s', target: 0.9, warmStart: WARM_STARTS.sokoban,
    overrides: ['iterations=40', 'lrActor=1e-4', 'lrCritic=1e-3', 'asyncStaleness=1'] },
  { name: 'sokoban-async-tis', preset: 'starpo-s', target: 0.9, warmStart: WARM_STARTS.sokoban,
    overrides: ['iterations=40', 'lrActor=1e-4', 'lrCritic=1e-3', 'asyncStaleness=1', 'offPolicyCorrection=tis'] },
  { name: 'sokoban-vanilla', preset: 'starpo', target: 0.9, warmStart: WARM_STARTS.sokoban, overrides: ['iterations=40', 'lrActor=1e-4', 'lrCritic=1e-3'] },
  // Echo-Trap: a learning rate 300× too large collapses the policy; the detector should fire here and not above.
  { name: 'frozenlake-collapse', preset: 'starpo', target: 0.9, warmStart: WARM_STARTS.frozenlake,
    overrides: ['iterations=40', 'lrActor=3e-3', 'lrCritic=1e-3', 'gradClip=1000'] },
];

export interface CasePoint {
  iteration: number;
  success: number;
  val?: number;
  std: number;
  entropy: number;
  warning?: string;
}

export interface TrainedCase {
  config: RlConfig;
  curve: CasePoint[];
  /** Every iteration's whole metrics, in order (validation metrics where it ran). */
  reports: IterationReport[];
  /** Seconds of this case's own training (RL, and its warm-start unless shared). */
  wallSeconds: number;
  /** Seconds the shared warm-start took, when the case used one (counted once per bench run). */
  warmStartSeconds?: number;
  runDir: string;
}

/** Shared warm-starts of this process: name → the run directory holding checkpoint 0, and its time. */
const warmStarted = new Map<string, Promise<{ runDir: string; seconds: number }>>();

/**
 * The warm start's run directory: trained once per process, or once per STARPO_BENCH_WARM_DIR (a directory
 * whose `sft-<name>` run is reused by later bench processes, so each case can run in a process of its own).
 */
function warmStartRun({ name, overrides }: WarmStart): Promise<{ runDir: string; seconds: number }> {
  let run = warmStarted.get(name);
  if (!run) {
    run = (async () => {
      const kept = process.env.STARPO_BENCH_WARM_DIR;
      if (kept && existsSync(join(kept, `sft-${name}`, 'checkpoints', 'main', '00000000'))) return { runDir: join(kept, `sft-${name}`), seconds: 0 };
      const root = kept ?? mkdtempSync(join(tmpdir(), `starpo-bench-sft-${name}-`));
      const t0 = performance.now();
      await trainEmbedded({ root, runId: `sft-${name}`, config: resolveConfig({ overrides: [...overrides] }), stopAfter: 0 });
      return { runDir: join(root, `sft-${name}`), seconds: (performance.now() - t0) / 1000 };
    })();
    warmStarted.set(name, run);
  }
  return run;
}

/** Trains one case in a fresh temporary runs directory, recording its curve. */
export async function trainCase(k: Pick<LearningCase, 'name' | 'preset' | 'overrides' | 'warmStart'>, extra: string[] = []): Promise<TrainedCase> {
  const shared = k.warmStart ? await warmStartRun(k.warmStart) : undefined;
  const base = k.warmStart ? [...k.warmStart.overrides, 'sftSteps=0'] : [];
  const config: RlConfig = resolveConfig({ preset: k.preset, overrides: [...base, ...k.overrides, ...extra] });
  const root = mkdtempSync(join(tmpdir(), `starpo-bench-${k.name}-`));
  const curve: CasePoint[] = [];
  const reports: IterationReport[] = [];
  const t0 = performance.now();
  await trainEmbedded({ root, runId: k.name, config, initFrom: shared?.runDir, onIteration: (r: IterationReport) => {
    reports.push(r);
    curve.push({ iteration: r.iteration, success: r.metrics.success_rate, val: r.metrics['val/success_rate'],
      std: r.metrics['in_group_std/all'], entropy: r.metrics['entropy/mean'], ...(r.warning ? { warning: r.warning } : {}) });
  } });
  return {
    config, curve, reports, wallSeconds: (performance.now() - t0) / 1000, runDir: join(root, k.name),
    ...(shared ? { warmStartSeconds: shared.seconds } : {}),
  };
}

export async function runLearningCase(k: LearningCase, extra: string[] = [], write = console.log): Promise<Record<string, unknown>> {
  const { config, curve, wallSeconds, warmStartSeconds, runDir } = await trainCase(k, extra);
  const oracle = oracleSuccess(config.env, validationSeeds(config)).successRate;
  const final = curve.at(-1)?.val ?? 0;
  const line = {
    bench: 'learning', case: k.name, env: config.env, preset: k.preset, iterations: config.iterations, wallSeconds: Math.round(wallSeconds),
    ...(warmStartSeconds !== undefined ? { warmStart: k.warmStart?.name, warmStartSeconds: Math.round(warmStartSeconds) } : {}),
    valSuccess: final, oracle, ratioToOracle: oracle > 0 ? final / oracle : null, target: k.target, reached: oracle > 0 && final / oracle >= k.target,
    echoTrapWarnings: curve.filter((p) => p.warning).map((p) => p.iteration), runDir, curve,
  };
  write(JSON.stringify(line));
  return line;
}

/** STARPO_BENCH_CASES picks cases; STARPO_BENCH_SET="iterations=20,valSeeds=64" overrides every case's RL config. */
export async function benchLearning(only = process.env.STARPO_BENCH_CASES): Promise<void> {
  const names = only ? only.split(',') : LEARNING_CASES.map((k) => k.name);
  const extra = (process.env.STARPO_BENCH_SET ?? '').split(',').filter((s) => s.trim() !== '');
  for (const k of LEARNING_CASES.filter((c) => names.includes(c.name))) await runLearningCase(k, extra);
}
