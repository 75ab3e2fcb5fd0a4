/**
 * One training iteration as a chain of stages — rollout → reward → filter → score → advantage →
 * update — each a call into a pure function or the policy engine, timed separately. The same
 * chain runs in the embedded driver and, stage by stage, as Temporal activities. Only the rows the
 * filter keeps are scored: metrics over every row (entropy) come from the rollout's own outputs.
 */
import { performance } from 'node:perf_hooks';
import { type AssembledBatch, assemble, trajectoryRecord } from './assemble.ts';
import { type DynamicSamplingPlan, planDynamicSampling } from './dynamic-sampling.ts';
import { sampleRounds } from './sampling-rounds.ts';
import { computeAdvantages, type AdvantageOutput } from './advantages.ts';
import { type Batch, rowsOfGroups, takeRows } from './batch.ts';
import type { RlConfig } from './config.ts';
import { FILTERS, type FilterOutput } from './filters.ts';
import { batchMetrics, behaviourGap, explainedVariance } from './metrics.ts';
import { placeRewards } from './reward.ts';
import type { Trajectory } from './rollout.ts';
import { type UpdateInput, updateStage } from './update.ts';
import { type KeptRows, keepRows, type ScoredBatch, updateInputOf } from './kept-rows.ts';
import { policyLag } from './async-schedule.ts';
import { samplingSeed, trainSeed, VALIDATION_SAMPLING_SEED, validationSeeds } from './seeds.ts';
import { truncatedImportanceSampling } from './off-policy.ts';
import type { PolicyHandle, Trainer } from '../policy/engine/handle.ts';
import { toolMetricsOf, toolOutcomeOf } from './tool-use.ts';
import type { EpisodeSource } from './episode-source.ts';
import { collapseMetrics, type CollapseProbe } from './collapse-metrics.ts';
import { collapseDue, collapseProbe, type Scorer } from './collapse-probe.ts';
import {
  ASYNC_POLICY_LAG,
  BATCH_TRAINED_TRAJECTORIES,
  BATCH_TRUNCATED,
  VALUES_EXPLAINED_VARIANCE,
  valMetric,
} from './metric-names.ts';

/** A run's models: in-process Policies or PolicyEngines (`P`), which the stages use alike. */
export interface IterationModels<P extends PolicyHandle = PolicyHandle> {
  actor: P;
  critic: P | null;
  /** Frozen reference for the KL term (null when klCoef = 0). */
  ref: P | null;
}

export interface IterationResult {
  trajectories: Trajectory[];
  metrics: Record<string, number>;
  timingsMs: Record<string, number>;
  /** RAGEN-2's collapse probe (recorded in the IterationEvent); null when not due. */
  collapse: CollapseProbe | null;
}

class Stopwatch {
  readonly ms: Record<string, number> = {};
  async time<T>(stage: string, fn: () => Promise<T> | T): Promise<T> {
    const t0 = performance.now();
    try {
      return await fn();
    } finally {
      this.ms[stage] = (this.ms[stage] ?? 0) + performance.now() - t0;
    }
  }
}

/**
 * Stage: the iteration's rollouts, or a shard of them (`groups`: which of the iteration's groups), played by the
 * driver's episode source (episode-source.ts: the built-in environments or an agent program).
 */
export function rolloutStage(
  c: RlConfig,
  iteration: number,
  episodes: EpisodeSource,
  groups?: readonly number[],
): Promise<Trajectory[]> {
  const ids = groups ?? Array.from({ length: c.envGroups }, (_, g) => g);
  return episodes({
    seeds: ids.map((g) => trainSeed(c, iteration, g)),
    groupIds: ids,
    groupSize: c.groupSize,
    temperature: c.trainTemperature,
    samplingSeed: samplingSeed(c, iteration),
    split: 'train',
    iteration,
  });
}

/**
 * Stage: old log-probs (actor, or the rollout's own), values (critic) and reference log-probs (KL) of the
 * trained rows `rows` (indices into the assembled batch). Scoring a row alone or among others gives the same
 * numbers (the programs' rows are independent), so scoring only these equals scoring all and picking them.
 */
export async function scoreStage(
  c: RlConfig,
  all: AssembledBatch,
  rows: readonly number[],
  models: IterationModels,
): Promise<ScoredBatch> {
  const { behaviour, tokens } = keepRows(all, rows);
  if (rows.length === 0) return { logprobs: behaviour, metrics: {} };
  const recompute = c.oldLogprobs === 'recompute';
  const logprobs = recompute ? (await models.actor.score(tokens, c.trainTemperature)).logprobs! : behaviour;
  const values = models.critic ? (await models.critic.score(tokens)).values : undefined;
  const refLogprobs = models.ref ? (await models.ref.score(tokens, c.trainTemperature)).logprobs : undefined;
  return {
    logprobs,
    values,
    refLogprobs,
    metrics: recompute ? behaviourGap(logprobs, behaviour, tokens.lossMask) : {},
  };
}

/** The rows (indices into the batch, ascending) of the groups the filter keeps: the rows scored and trained. */
export function trainedRows(c: RlConfig, batch: Batch, informative?: readonly string[]): number[] {
  return rowsOfGroups(batch.trajectories, filterStage(c, batch, informative).keptGroupIds);
}

/**
 * Stage: RAGEN-2's collapse probe of the rollouts, scored by the actor the update starts from (the one that played
 * them, unless asynchronous: both drivers score with the policy of checkpoint i − 1); null when not due.
 */
export function collapseStage(
  c: RlConfig,
  iteration: number,
  trajectories: readonly Trajectory[],
  actor: Scorer,
): Promise<CollapseProbe | null> {
  return collapseProbe(c, iteration, trajectories, actor, samplingSeed(c, iteration));
}

/**
 * Stage: which groups to train on (pure). With DAPO dynamic sampling, `informative` (the planner's
 * kept groups) is applied first and the configured filter then chooses among those.
 */
export function filterStage(c: RlConfig, batch: Batch, informative?: readonly string[]): FilterOutput {
  const keep = informative && new Set(informative);
  return FILTERS[c.filter]({
    trajectories: keep ? batch.trajectories.filter((t) => keep.has(t.groupId)) : batch.trajectories,
    params: {
      fraction: c.filterFraction,
      band: [c.filterBandLow, c.filterBandHigh],
      topP: c.filterTopP,
      topPEps: c.filterTopPEps,
    },
  });
}

/** Stage (pure): DAPO's plan after `tries` rounds: enough groups whose returns differ, or how many more to play. */
export function samplingPlan(c: RlConfig, trajectories: readonly Trajectory[], tries: number): DynamicSamplingPlan {
  return planDynamicSampling({
    trajectories: trajectories.map(trajectoryRecord),
    targetGroups: c.envGroups,
    tries,
    maxTries: c.dynamicSamplingMaxTries,
  });
}

/**
 * The rollout of an iteration, with DAPO dynamic sampling when configured: groups whose returns are all
 * equal carry no signal, so more groups (new seeds) are played, up to dynamicSamplingMaxTries rounds.
 */
export async function sampleGroups(
  c: RlConfig,
  iteration: number,
  episodes: EpisodeSource,
): Promise<{ trajectories: Trajectory[]; informative?: readonly string[]; metrics: Record<string, number> }> {
  const trajectories: Trajectory[] = [];
  const play = async (groups: number[]) =>
    void trajectories.push(...(await rolloutStage(c, iteration, episodes, groups)));
  const plan = await sampleRounds(c, play, (tries) => samplingPlan(c, trajectories, tries));
  return plan ? { trajectories, informative: plan.keptGroupIds, metrics: plan.metrics } : { trajectories, metrics: {} };
}

/** The kept rows' old (training policy's) and behaviour (sampling) log-probs, [rows, T] each. */
export interface RowLogprobs {
  old: Float32Array;
  behaviour: Float32Array;
}

/**
 * Stage: advantages and value targets of the kept rows (pure); with offPolicyCorrection tis, weighted per
 * token by the truncated importance ratio of `logprobs` (src/rl/off-policy.ts).
 */
export function advantageStage(
  c: RlConfig,
  batch: Batch,
  tokenRewards: Float32Array,
  values?: Float32Array,
  logprobs?: RowLogprobs,
): AdvantageOutput {
  const adv = computeAdvantages({
    batch,
    tokenRewards,
    values,
    estimator: c.advantage,
    whiten: c.whitenAdvantages,
    params: {
      gamma: c.gamma,
      lambda: c.lambda,
      normByStd: c.groupNormByStd,
      stepGamma: c.gigpoStepGamma,
      omega: c.gigpoOmega,
      gigpoForm: c.gigpoForm,
    },
  });
  if (c.offPolicyCorrection !== 'tis' || !logprobs) return adv;
  const tis = truncatedImportanceSampling({
    advantages: adv.advantages,
    oldLogprobs: logprobs.old,
    behaviourLogprobs: logprobs.behaviour,
    lossMask: batch.lossMask,
    cap: c.tisCap,
  });
  return { ...adv, advantages: tis.advantages, metrics: { ...adv.metrics, ...tis.metrics } };
}

/**
 * The schedule's own metric: async/policy_lag, updates between the behaviour and the training
 * policy (asynchronous runs only).
 */
export function scheduleMetrics(c: RlConfig, iteration: number): Record<string, number> {
  return c.asyncStaleness === 0 ? {} : { [ASYNC_POLICY_LAG]: policyLag(c.asyncStaleness, iteration) };
}

/** What the advantage stage reads: the batch, the kept rows and their scores, and the stages' outputs before it. */
export interface AdvantageInputs {
  trajectories: readonly Trajectory[];
  all: AssembledBatch;
  kept: KeptRows;
  /** [B, T] token rewards of the whole batch (placeRewards). */
  tokenRewards: Float32Array;
  scored: ScoredBatch;
  filtered: FilterOutput;
  /** The DAPO sampling plan's metrics ({} without dynamic sampling). */
  samplingMetrics: Record<string, number>;
  collapse: CollapseProbe | null;
}

/** Stage: the kept rows' advantages (advantageStage) and the iteration's metrics before the update. */
export function advantagesAndMetrics(
  c: RlConfig,
  iteration: number,
  s: AdvantageInputs,
): {
  adv: AdvantageOutput;
  metrics: Record<string, number>;
} {
  const { kept, scored, filtered } = s;
  const tokenRewards = takeRows(s.tokenRewards, kept.batch.T, kept.rows);
  const logprobs = { old: scored.logprobs, behaviour: kept.behaviour };
  const adv = advantageStage(c, kept.batch, tokenRewards, scored.values, logprobs);
  const stageMetrics = [s.samplingMetrics, filtered.metrics, scored.metrics, scheduleMetrics(c, iteration)];
  const metrics = iterationMetrics({
    c,
    trajectories: s.trajectories,
    all: s.all,
    kept: kept.batch,
    keptGroupIds: filtered.keptGroupIds,
    values: scored.values,
    adv,
    stageMetrics,
    collapse: s.collapse,
  });
  return { adv, metrics };
}

/** Stage: the update on the kept rows (updateInputOf), its mini-batches seeded by the iteration. */
export function updateKeptRows(
  c: RlConfig,
  iteration: number,
  input: UpdateInput,
  models: { actor: Trainer; critic: Trainer | null },
): Promise<Record<string, number>> {
  return input.tokens.batch === 0 ? Promise.resolve({}) : updateStage(input, models, c, samplingSeed(c, iteration));
}

/** An iteration's rollout as sampleGroups returns it. */
export type SampledGroups = Awaited<ReturnType<typeof sampleGroups>>;

/**
 * Rollout (or, for an asynchronous run, waiting for the rollout `played` gives: an older policy's, already
 * under way), then reward → filter → score → advantage → update with the models' current weights.
 */
export async function runIteration(
  c: RlConfig,
  iteration: number,
  models: IterationModels,
  episodes: EpisodeSource,
  played?: () => Promise<SampledGroups>,
): Promise<IterationResult> {
  const clock = new Stopwatch();
  const sampled = await clock.time('rollout', () => played?.() ?? sampleGroups(c, iteration, episodes));
  const { trajectories } = sampled;
  const all = assemble(trajectories);
  const collapse = collapseDue(c, iteration)
    ? await clock.time('collapse', () => collapseStage(c, iteration, trajectories, models.actor))
    : null;
  const { tokenRewards } = await clock.time('reward', () =>
    placeRewards({ batch: all.batch, placement: c.rewardPlacement }),
  );
  const filtered = await clock.time('filter', () => filterStage(c, all.batch, sampled.informative));
  const kept = keepRows(all, rowsOfGroups(all.batch.trajectories, filtered.keptGroupIds));
  const scored = await clock.time('score', () => scoreStage(c, all, kept.rows, models));
  const { adv, metrics } = await clock.time('advantage', () =>
    advantagesAndMetrics(c, iteration, {
      trajectories,
      all,
      kept,
      tokenRewards,
      scored,
      filtered,
      samplingMetrics: sampled.metrics,
      collapse,
    }),
  );
  const train =
    kept.rows.length === 0
      ? {}
      : await clock.time('update', () => updateKeptRows(c, iteration, updateInputOf(kept, scored, adv), models));
  return { trajectories, metrics: { ...metrics, ...train }, timingsMs: clock.ms, collapse };
}

/**
 * An iteration's metrics before the update, one definition for both drivers: outcome metrics and the
 * sampling entropy over every trajectory, explained variance over the trained (kept) rows, then the
 * stages' own metrics.
 */
export function iterationMetrics(m: {
  c: RlConfig;
  trajectories: readonly Trajectory[];
  all: AssembledBatch;
  kept: Batch;
  keptGroupIds: readonly string[];
  values?: Float32Array;
  adv: AdvantageOutput;
  stageMetrics: Record<string, number>[];
  collapse?: CollapseProbe | null;
}): Record<string, number> {
  const passK = [1, Math.min(4, m.c.groupSize)];
  const entropy = m.all.samplingEntropy ?? undefined;
  return {
    ...batchMetrics({ batch: m.all.batch, keptGroupIds: m.keptGroupIds, passK, entropy }),
    ...(m.values && m.adv.returns
      ? { [VALUES_EXPLAINED_VARIANCE]: explainedVariance(m.values, m.adv.returns, m.kept.lossMask) }
      : {}),
    ...toolMetricsOf(m.c, m.trajectories.map(toolOutcomeOf)),
    ...Object.assign({}, ...m.stageMetrics),
    ...m.adv.metrics,
    ...(m.collapse ? collapseMetrics(m.collapse) : {}),
    [BATCH_TRAINED_TRAJECTORIES]: m.kept.B,
    [BATCH_TRUNCATED]: m.trajectories.filter((t) => t.truncated).length,
  };
}

/** Validation: every fixed seed played `samples` times at the validation temperature; success and pass@k. */
export async function runValidation(
  c: RlConfig,
  episodes: EpisodeSource,
  samples = 1,
): Promise<{ trajectories: Trajectory[]; metrics: Record<string, number> }> {
  const seeds = validationSeeds(c);
  const trajectories = await episodes({
    seeds,
    groupIds: seeds.map((_, g) => g),
    groupSize: samples,
    temperature: c.valTemperature,
    samplingSeed: VALIDATION_SAMPLING_SEED,
    split: 'val',
    iteration: 0,
  });
  const { batch } = assemble(trajectories);
  const m = {
    ...batchMetrics({ batch, passK: [...new Set([1, samples])] }),
    ...toolMetricsOf(c, trajectories.map(toolOutcomeOf)),
  };
  return { trajectories, metrics: Object.fromEntries(Object.entries(m).map(([k, v]) => [valMetric(k), v])) };
}
