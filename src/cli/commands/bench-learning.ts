/**
 * `starpo bench learning`: tiny models trained from scratch on this machine, each run's validation
 * success compared with the environment's oracle ceiling on the same held-out seeds, plus a
 * side-by-side of vanilla StarPO and StarPO-S on the same seeds (stability and Echo-Trap firings).
 * JSON lines, one per run; a benchmark, not a test (wall-clock varies with the machine's load).
 */
import { mkdtempSync } from 'node:fs';
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
}

const SCRATCH = ['valEvery=5', 'valSeeds=128', 'threads=0'];

export const LEARNING_CASES: LearningCase[] = [
  { name: 'bandit', preset: 'starpo-s', target: 0.95,
    overrides: [...SCRATCH, 'env=bandit', 'iterations=50', 'sftSteps=60', 'sftPolicy=random', 'sftEpisodes=256', 'lrActor=3e-4', 'lrCritic=1e-3'] },
  { name: 'frozenlake', preset: 'starpo-s', target: 0.9,
    overrides: [...SCRATCH, 'env=frozenlake', 'iterations=40', 'sftSteps=1500', 'sftPolicy=expert', 'sftEpisodes=6000',
      'lrActor=1e-4', 'lrCritic=1e-3', 'modelHidden=96', 'modelFfn=256'] },
  { name: 'sokoban', preset: 'starpo-s', target: 0.9,
    overrides: [...SCRATCH, 'env=sokoban', 'iterations=40', 'sftSteps=400', 'sftPolicy=expert', 'sftEpisodes=1000',
      'lrActor=1e-4', 'lrCritic=1e-3', 'modelHidden=96', 'modelFfn=256'] },
  { name: 'sokoban-vanilla', preset: 'starpo', target: 0.9,
    overrides: [...SCRATCH, 'env=sokoban', 'iterations=40', 'sftSteps=400', 'sftPolicy=expert', 'sftEpisodes=1000',
      'lrActor=1e-4', 'lrCritic=1e-3', 'modelHidden=96', 'modelFfn=256'] },
  // Echo-Trap: a learning rate 30× too large collapses the policy; the detector should fire here and not above.
  { name: 'frozenlake-collapse', preset: 'starpo', target: 0.9,
    overrides: [...SCRATCH, 'env=frozenlake', 'iterations=40', 'sftSteps=300', 'sftPolicy=expert', 'sftEpisodes=1000',
      'lrActor=3e-3', 'lrCritic=1e-3', 'modelHidden=96', 'modelFfn=256', 'gradClip=1000'] },
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
  wallSeconds: number;
  runDir: string;
}

/** Trains one case in a fresh temporary runs directory, recording its curve. */
export async function trainCase(k: Pick<LearningCase, 'name' | 'preset' | 'overrides'>, extra: string[] = []): Promise<TrainedCase> {
  const config: RlConfig = resolveConfig({ preset: k.preset, overrides: [...k.overrides, ...extra] });
  const root = mkdtempSync(join(tmpdir(), `starpo-bench-${k.name}-`));
  const curve: CasePoint[] = [];
  const reports: IterationReport[] = [];
  const t0 = performance.now();
  await trainEmbedded({ root, runId: k.name, config, onIteration: (r: IterationReport) => {
    reports.push(r);
    curve.push({ iteration: r.iteration, success: r.metrics.success_rate, val: r.metrics['val/success_rate'],
      std: r.metrics['in_group_std/all'], entropy: r.metrics['entropy/mean'], ...(r.warning ? { warning: r.warning } : {}) });
  } });
  return { config, curve, reports, wallSeconds: (performance.now() - t0) / 1000, runDir: join(root, k.name) };
}

export async function runLearningCase(k: LearningCase, extra: string[] = [], write = console.log): Promise<Record<string, unknown>> {
  const { config, curve, wallSeconds, runDir } = await trainCase(k, extra);
  const oracle = oracleSuccess(config.env, validationSeeds(config)).successRate;
  const final = curve.at(-1)?.val ?? 0;
  const line = {
    bench: 'learning', case: k.name, env: config.env, preset: k.preset, iterations: config.iterations, wallSeconds: Math.round(wallSeconds),
    valSuccess: final, oracle, ratioToOracle: oracle > 0 ? final / oracle : null, target: k.target, reached: oracle > 0 && final / oracle >= k.target,
    echoTrapWarnings: curve.filter((p) => p.warning).map((p) => p.iteration), runDir, curve,
  };
  write(JSON.stringify(line));
  return line;
}

export async function benchLearning(only = process.env.STARPO_BENCH_CASES): Promise<void> {
  const names = only ? only.split(',') : LEARNING_CASES.map((k) => k.name);
  for (const k of LEARNING_CASES.filter((c) => names.includes(c.name))) await runLearningCase(k);
}
