/**
 * `starpo bench learning`: tiny models trained on this machine, each run's validation success set
 * beside the warm start it began from and the environment's oracle ceiling on the same held-out seeds:
 * warm-start success, final success, the RL gain with a 95% interval over the validation seeds (paired by
 * seed), the ratio to the oracle, the format rates (parsed, cut, echo: src/rl/format-rates.ts) of the untrained
 * model, the warm start and the result, the environment-spec id and the wall-clock. JSON lines, one per run; a
 * benchmark, not a test (wall-clock varies with the machine's load). Cases: learning-cases.ts.
 */
import { mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { oracleSuccess } from '../envs/index.ts';
import { resolveConfig, type RlConfig } from '../rl/config.ts';
import { trainEmbedded, type IterationReport } from '../embedded/driver.ts';
import { validationSeeds } from '../rl/seeds.ts';
import { runEnvConfig, runEnvSpecId } from '../rl/run-env.ts';
import { mean, pairedDifference } from '../rl/stats.ts';
import { evaluateCheckpoint } from '../replay/evaluate.ts';
import type { FormatRates } from '../rl/format-rates.ts';
import { pickNames } from './name-list.ts';
import { LEARNING_CASES, TINY, type LearningCase, type WarmStart } from './learning-cases.ts';
import { type CaseStart, caseStart, storedRun } from './stored-case.ts';
import {
  ACTOR_NO_SIGNAL,
  COLLAPSE_MI_ESTIMATE,
  ENTROPY_MEAN,
  IN_GROUP_STD_ALL,
  KEPT_TOKENS,
  SUCCESS_RATE,
  TOKENS_GENERATED,
  VAL_SUCCESS_RATE,
} from '../rl/metric-names.ts';

export { LEARNING_CASES, type LearningCase, type WarmStart } from './learning-cases.ts';

export interface CasePoint {
  iteration: number;
  lineageId: string;
  success: number;
  val?: number;
  std: number;
  entropy: number;
  mi?: number;
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
  /** The machine's 1-minute load average as each iteration of this process ended. */
  loads: number[];
  /**
   * Set when this process resumed the case's run (STARPO_BENCH_RUNS_DIR): from which checkpoint, and the seconds
   * the iterations before it took (in wallSeconds too).
   */
  resumed?: { fromIteration: number; earlierSeconds: number };
  /** Where the policy before RL is: the shared warm start's checkpoint 0, else the run's own. */
  startCheckpoint: string;
}

/** Extra overrides for every warm start and case of this process (the tiny mode's). */
let extraOverrides: readonly string[] = [];

/** Shared warm-starts of this process: name → the run directory holding checkpoint 0, and its time. */
const warmStarted = new Map<string, Promise<{ runDir: string; seconds: number }>>();

/**
 * The warm start's run directory: trained once per process, or once per STARPO_BENCH_WARM_DIR (a directory
 * whose `sft-<name>` run is reused by later bench processes, so each case can run in a process of its own; by
 * default STARPO_BENCH_RUNS_DIR). A warm start that stopped before its checkpoint is trained again; a kept one with
 * other settings is refused.
 */
function warmStartRun({ name, overrides }: WarmStart): Promise<{ runDir: string; seconds: number }> {
  let run = warmStarted.get(name);
  if (!run) {
    run = (async () => {
      const kept = process.env.STARPO_BENCH_WARM_DIR ?? process.env.STARPO_BENCH_RUNS_DIR;
      const runId = `sft-${name}`;
      const config = resolveConfig({ overrides: [...overrides, ...extraOverrides] });
      const root = kept ?? mkdtempSync(join(tmpdir(), `starpo-bench-sft-${name}-`));
      // A kept warm start trained with other settings is refused, not reused.
      const start: CaseStart = kept ? await caseStart(root, runId, config) : { kind: 'fresh' };
      if (start.kind === 'resume') return { runDir: join(root, runId), seconds: 0 };
      const t0 = performance.now();
      await trainEmbedded({ root, runId, config, stopAfter: 0, restart: start.kind === 'restart' });
      return { runDir: join(root, runId), seconds: (performance.now() - t0) / 1000 };
    })();
    warmStarted.set(name, run);
  }
  return run;
}

/** Trains one case in a fresh temporary runs directory, recording its curve; `watch` sees each iteration as it ends. */
/** A case's RL config: its warm start's settings (model included), its own, the tiny mode's, then `extra`. */
function caseConfig(k: Pick<LearningCase, 'preset' | 'overrides' | 'warmStart'>, extra: readonly string[]): RlConfig {
  const base = k.warmStart ? [...k.warmStart.overrides, 'sftSteps=0'] : [];
  // Without a shared warm start the policy before RL is the run's own checkpoint 0: a milestone keeps it.
  const keep = k.warmStart ? [] : ['keepEveryCheckpoint=1000000'];
  return resolveConfig({
    preset: k.preset,
    overrides: [...base, ...k.overrides, ...keep, ...extraOverrides, ...extra],
  });
}

/** Resolves every case's config before anything trains, so a bad override is refused before a warm start is written. */
export function checkCases(cases: readonly LearningCase[], extra: readonly string[]): void {
  for (const k of cases) caseConfig(k, extra);
}

export async function trainCase(
  k: Pick<LearningCase, 'name' | 'preset' | 'overrides' | 'warmStart'>,
  extra: string[] = [],
  watch?: (r: IterationReport) => void,
): Promise<TrainedCase> {
  const config = caseConfig(k, extra);
  const kept = process.env.STARPO_BENCH_RUNS_DIR;
  const root = kept ?? mkdtempSync(join(tmpdir(), `starpo-bench-${k.name}-`));
  const start: CaseStart = kept ? await caseStart(root, k.name, config) : { kind: 'fresh' };
  const shared = k.warmStart ? await warmStartRun(k.warmStart) : undefined;
  let reports: IterationReport[] = [];
  const loads: number[] = [];
  const t0 = performance.now();
  await trainEmbedded({
    root,
    runId: k.name,
    ...(start.kind === 'resume' ? { resume: true } : { config, initFrom: shared?.runDir }),
    restart: start.kind === 'restart',
    onIteration: (r: IterationReport) => {
      reports.push(r);
      loads.push(loadavg()[0]);
      watch?.(r);
    },
  });
  let wallSeconds = (performance.now() - t0) / 1000;
  let resumed: TrainedCase['resumed'];
  if (start.kind === 'resume') {
    // The whole run's curve, the iterations of the processes before this one included.
    const stored = await storedRun(root, k.name, config.iterations);
    reports = stored.reports;
    const before = stored.seconds.reduce(
      (sum, s, i) => (reports[i].iteration <= start.fromIteration ? sum + s : sum),
      0,
    );
    resumed = { fromIteration: start.fromIteration, earlierSeconds: Math.round(before) };
    wallSeconds += before;
  }
  const runDir = join(root, k.name);
  return {
    config,
    curve: reports.map(casePoint),
    reports,
    wallSeconds,
    runDir,
    loads,
    startCheckpoint: `${shared?.runDir ?? runDir}@0`,
    ...(shared ? { warmStartSeconds: shared.seconds } : {}),
    ...(resumed ? { resumed } : {}),
  };
}

/** An iteration's point on a case's curve. */
function casePoint(r: IterationReport): CasePoint {
  const m = r.metrics;
  return {
    iteration: r.iteration,
    lineageId: r.lineageId,
    success: m[SUCCESS_RATE],
    val: m[VAL_SUCCESS_RATE],
    std: m[IN_GROUP_STD_ALL],
    entropy: m[ENTROPY_MEAN],
    mi: m[COLLAPSE_MI_ESTIMATE],
    ...(r.warning ? { warning: r.warning } : {}),
  };
}

interface Validated {
  rate: number;
  bySeed: number[];
  format: FormatRates;
}

/**
 * Validation success per seed and the format rates of a checkpoint, or of the pretrained model itself
 * (`{ model: true }`), under the case's validation settings and token limit (a shared warm start's own run may
 * have had another: measured at 24 tokens, SmolLM2's FrozenLake warm start was 3.1% with 86% of its turns cut).
 */
async function validate(policy: { checkpoint: string } | { model: true }, c: RlConfig): Promise<Validated> {
  const { env, valSeeds: seeds, valTemperature: temperature, valSamples: samples, maxResponseTokens } = c;
  const which = 'checkpoint' in policy ? { checkpoint: policy.checkpoint } : { model: c.model, config: c };
  const r = await evaluateCheckpoint({ ...which, env, seeds, temperature, samples, maxResponseTokens });
  return { rate: r.successRate, bySeed: r.successBySeed, format: r.format };
}

const round = (x: number, digits = 4) => Number(x.toFixed(digits));

/** Format rates rounded for a bench line. */
const formatLine = (f: FormatRates) => ({
  turns: f.turns,
  parsed: round(f.parsed),
  cut: round(f.cut),
  echo: round(f.echo),
});

/**
 * Tokens the rollouts wrote (every trajectory's assistant tokens) and the actor trained on (the kept rows' ones, once
 * per PPO epoch, in iterations whose actor step ran), summed over the run.
 */
export function tokenTotals(c: Pick<RlConfig, 'ppoEpochs'>, reports: readonly IterationReport[]) {
  let generated = 0;
  let trained = 0;
  for (const { metrics: m } of reports) {
    generated += m[TOKENS_GENERATED] ?? 0;
    if (m[ACTOR_NO_SIGNAL] !== 1) trained += (m[KEPT_TOKENS] ?? 0) * c.ppoEpochs;
  }
  return { generated, trained };
}

/** The bench line of a trained case: before and after RL on the same seeds, beside the oracle. */
export async function measureCase(k: LearningCase, trained: TrainedCase): Promise<Record<string, unknown>> {
  const { config, curve, wallSeconds, warmStartSeconds, runDir } = trained;
  // A pretrained model's own score, before any warm start (a model from scratch starts at random: nothing to add).
  const untrained = config.model && k.warmStart ? await validate({ model: true }, config) : undefined;
  const before = await validate({ checkpoint: trained.startCheckpoint }, config);
  const after = await validate({ checkpoint: runDir }, config);
  const gain = pairedDifference(before.bySeed, after.bySeed);
  const oracle = oracleSuccess(runEnvConfig(config), validationSeeds(config)).successRate;
  const ratio = oracle > 0 ? after.rate / oracle : null;
  return {
    bench: 'learning',
    case: k.name,
    env: config.env,
    envSpecId: runEnvSpecId(config),
    preset: k.preset,
    iterations: config.iterations,
    envGroups: config.envGroups,
    groupSize: config.groupSize,
    lrActor: config.lrActor,
    wallSeconds: Math.round(wallSeconds),
    load: trained.loads.length
      ? {
          mean: round(mean(trained.loads), 2),
          max: round(Math.max(...trained.loads), 2),
        }
      : null,
    tokens: tokenTotals(config, trained.reports),
    ...(trained.resumed ? { resumed: trained.resumed } : {}),
    ...(warmStartSeconds !== undefined
      ? { warmStart: k.warmStart?.name, warmStartSeconds: Math.round(warmStartSeconds) }
      : {}),
    valSeeds: config.valSeeds,
    ...(untrained ? { untrainedSuccess: untrained.rate, untrainedFormat: formatLine(untrained.format) } : {}),
    warmStartSuccess: before.rate,
    warmStartFormat: formatLine(before.format),
    valSuccess: after.rate,
    format: formatLine(after.format),
    rlGain: round(gain.mean),
    rlGainCi95: [round(gain.low), round(gain.high)],
    oracle,
    ratioToOracle: ratio,
    target: k.targetSuccess !== undefined ? { success: k.targetSuccess } : { ratioToOracle: k.target },
    reached: k.targetSuccess !== undefined ? after.rate >= k.targetSuccess : ratio !== null && ratio >= k.target,
    echoTrapWarnings: curve.filter((p) => p.warning).map((p) => p.iteration),
    lineages: [...new Set(curve.map((p) => p.lineageId))],
    runDir,
    curve,
  };
}

export async function runLearningCase(
  k: LearningCase,
  extra: string[] = [],
  write = console.log,
): Promise<Record<string, unknown>> {
  const line = await measureCase(k, await trainCase(k, extra));
  write(JSON.stringify(line));
  return line;
}

/** Tiny mode: STARPO_BENCH_TINY=1 or --tiny. */
export function useTinyMode(tiny = process.env.STARPO_BENCH_TINY === '1'): void {
  extraOverrides = tiny ? TINY : [];
}

/** STARPO_BENCH_SET="seed=1,valSeeds=64": overrides for every case's RL config (not its warm start's). */
export const benchSetOverrides = (): string[] =>
  (process.env.STARPO_BENCH_SET ?? '').split(',').filter((s) => s.trim() !== '');

/** STARPO_BENCH_CASES picks cases; STARPO_BENCH_SET overrides every case's RL config (benchSetOverrides). */
export async function benchLearning(opts: { tiny?: boolean; cases?: string } = {}): Promise<void> {
  useTinyMode(opts.tiny || process.env.STARPO_BENCH_TINY === '1');
  const only = opts.cases ?? process.env.STARPO_BENCH_CASES;
  const known = LEARNING_CASES.map((k) => k.name);
  const names = pickNames('cases', 'learning cases', only || undefined, known);
  const picked = LEARNING_CASES.filter((c) => names.includes(c.name));
  checkCases(picked, benchSetOverrides());
  for (const k of picked) await runLearningCase(k, benchSetOverrides());
}
