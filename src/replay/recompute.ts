/**
 * An iteration's trajectory-derived metrics, recomputed from its trajectory events alone with the
 * trainer's own functions: DAPO's sampling plan, the run's filter (filterStage, for in_group_std/kept
 * and filter/*), and batchMetrics with the trainer's pass@k values. Validation metrics get the `val/`
 * prefix and pass@{samples per seed}, as runValidation reports them.
 */
import { rowsOfGroups, type TrajectoryRecord } from '../rl/batch.ts';
import type { RlConfig } from '../rl/config.ts';
import { planDynamicSampling, type DynamicSamplingPlan } from '../rl/dynamic-sampling.ts';
import { filterStage } from '../rl/stages/filter.ts';
import { batchMetrics } from '../rl/metrics.ts';
import { toolMetricsOf, toolOutcomeOf } from '../rl/tool-use.ts';
import type { TrajectoryEvent } from '../events/index.ts';
import { compactBatch, rolloutOrder, trajectoryRecordOf } from './records.ts';
import { reenact, type EpisodeSetup } from './reenact.ts';
import { ASYNC_POLICY_LAG, BATCH_TRAINED_TRAJECTORIES, BATCH_TRUNCATED, valMetric } from '../rl/metric-names.ts';

export interface Recomputed {
  metrics: Record<string, number>;
  /** "train 3/1: turn 0: …" for every trajectory whose replayed episode disagrees with the log. */
  divergences: string[];
}

interface SplitRecords {
  events: TrajectoryEvent[];
  records: TrajectoryRecord[];
  divergences: string[];
}

function toRecords(split: string, events: readonly TrajectoryEvent[], setup: EpisodeSetup): SplitRecords {
  const ordered = rolloutOrder(events);
  const divergences: string[] = [];
  const records = ordered.map((e) => {
    const played = reenact(e, setup);
    if (played.divergence) divergences.push(`${split} ${e.group}/${e.rolloutIndex}: ${played.divergence}`);
    return trajectoryRecordOf(e, played.proposed);
  });
  return { events: ordered, records, divergences };
}

/**
 * DAPO's plan as the trainer reached it: round 1 holds the first envGroups groups, each later round the
 * groups the previous plan asked for (group numbers continue), so the tries count replays too.
 */
export function replayDynamicSampling(c: RlConfig, s: SplitRecords): DynamicSamplingPlan {
  let collected = c.envGroups;
  for (let tries = 1; ; tries++) {
    const trajectories = s.records.filter((_, i) => s.events[i].group < collected);
    const maxTries = c.dynamicSamplingMaxTries;
    const plan = planDynamicSampling({ trajectories, targetGroups: c.envGroups, tries, maxTries });
    if (plan.action !== 'sample-more' || !s.events.some((e) => e.group >= collected)) return plan;
    collected += plan.groupsNeeded;
  }
}

function trainMetrics(c: RlConfig, s: SplitRecords): Record<string, number> {
  const batch = compactBatch(s.events, s.records);
  const sampling = c.dynamicSampling ? replayDynamicSampling(c, s) : undefined;
  const filtered = filterStage(c, batch, sampling?.keptGroupIds);
  return {
    ...batchMetrics({ batch, keptGroupIds: filtered.keptGroupIds, passK: [1, Math.min(4, c.groupSize)] }),
    ...sampling?.metrics,
    ...filtered.metrics,
    [BATCH_TRAINED_TRAJECTORIES]: rowsOfGroups(s.records, filtered.keptGroupIds).length,
    [BATCH_TRUNCATED]: s.events.filter((e) => e.extras.truncated === 'true').length,
    ...toolMetricsOf(c, s.events.map(toolOutcomeOf)),
    ...(c.asyncStaleness > 0 ? { [ASYNC_POLICY_LAG]: policyLagOf(s.events) } : {}),
  };
}

/** Iteration − 1 − the version that played, from the events; NaN (a mismatch) unless one version played them all. */
function policyLagOf(events: readonly TrajectoryEvent[]): number {
  const lags = new Set(events.map((e) => e.iteration - 1 - e.policyVersion));
  return lags.size === 1 ? [...lags][0] : NaN;
}

function valMetrics(c: RlConfig, s: SplitRecords): Record<string, number> {
  const sizes = new Map<string, number>();
  for (const r of s.records) sizes.set(r.groupId, (sizes.get(r.groupId) ?? 0) + 1);
  const samples = Math.max(1, ...sizes.values());
  const m = {
    ...batchMetrics({ batch: compactBatch(s.events, s.records), passK: [1, samples] }),
    ...toolMetricsOf(c, s.events.map(toolOutcomeOf)),
  };
  return Object.fromEntries(Object.entries(m).map(([k, v]) => [valMetric(k), v]));
}

export function recomputeIteration(
  c: RlConfig,
  setup: EpisodeSetup,
  train: readonly TrajectoryEvent[],
  val: readonly TrajectoryEvent[],
): Recomputed {
  const t = toRecords('train', train, setup);
  const v = toRecords('val', val, setup);
  return {
    metrics: { ...(train.length > 0 ? trainMetrics(c, t) : {}), ...(val.length > 0 ? valMetrics(c, v) : {}) },
    divergences: [...t.divergences, ...v.divergences],
  };
}
