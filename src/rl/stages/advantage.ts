/**
 * The advantage stage: the kept rows' advantages and value targets, and the iteration's metrics before the update
 * (one definition for both drivers). The durable driver's `advantage` activity.
 */
import type { AssembledBatch } from '../assemble.ts';
import { computeAdvantages, type AdvantageOutput } from '../advantages.ts';
import { type Batch, takeRows } from '../batch.ts';
import type { RlConfig } from '../config.ts';
import type { FilterOutput } from '../filters.ts';
import { batchMetrics, explainedVariance } from '../metrics.ts';
import type { Trajectory } from '../rollout.ts';
import type { KeptRows, ScoredBatch } from '../kept-rows.ts';
import { policyLag } from '../async-schedule.ts';
import { truncatedImportanceSampling } from '../off-policy.ts';
import { toolMetricsOf, toolOutcomeOf } from '../tool-use.ts';
import { collapseMetrics, type CollapseProbe } from '../collapse-metrics.ts';
import {
  ASYNC_POLICY_LAG,
  BATCH_TRAINED_TRAJECTORIES,
  BATCH_TRUNCATED,
  VALUES_EXPLAINED_VARIANCE,
} from '../metric-names.ts';

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
