/**
 * Per-iteration metrics of docs/spec.md §5 computable from a batch (the trainer adds gradient norms, losses and
 * timings from the other stages, and prefixes train/ or val/). Definitions:
 *   success_rate            fraction of trajectories that reached the goal
 *   pass@k                  mean over groups of size n ≥ k of the unbiased 1 − C(n−c, k)/C(n, k), c = successes
 *   return/mean, return/std trajectory returns (env rewards + format penalties), sample std
 *   in_group_std/all|kept   mean over groups (all / kept by the filter) of the sample std of returns
 *   response_length/*       assistant-written tokens per trajectory (the loss-mask row sum)
 *   tokens/generated        assistant-written tokens of every trajectory; kept/tokens: of those the filter kept
 *   actions/valid_ratio     Σ valid actions / Σ proposed actions over all turns (0 when none proposed)
 *   actions/effective_ratio Σ state-changing actions / Σ proposed actions
 *   format_penalty_rate     fraction of turns that received a format penalty
 *   values/explained_variance  1 − Var(R − V)/(Var(R) + 1e-5) over masked tokens, sample variances (veRL)
 *   entropy/mean            token mean over the mask of the entropy of each token's sampling distribution, as the
 *                           rollout computed it (every trajectory, trained or not)
 *   logprobs/behaviour_gap_mean|max  mean and max over the trained rows' mask of |old log-prob recomputed by the
 *                           actor − log-prob the rollout sampled with| (only when old log-probs are recomputed)
 */
import { type Batch, groupRows, rowsOfGroups, trajectoryReturn } from './batch.ts';
import { BatchError } from '../errors.ts';
import { masked, maskedMean, mean, type Numbers, sampleStd, sampleVar, sum } from './stats.ts';
import {
  ENTROPY_MEAN,
  IN_GROUP_STD_ALL,
  IN_GROUP_STD_KEPT,
  KEPT_TOKENS,
  RESPONSE_LENGTH_MEAN,
  RETURN_MEAN,
  RETURN_STD,
  SUCCESS_RATE,
  TOKENS_GENERATED,
  VALUES_EXPLAINED_VARIANCE,
  passAtKMetric,
} from './metric-names.ts';

/** Unbiased pass@k (Chen et al. 2021) for n samples with c successes; 1 − Π_{i=n−c+1..n} (1 − k/i). */
export function passAtK(n: number, c: number, k: number): number {
  if (!(Number.isInteger(n) && Number.isInteger(c) && Number.isInteger(k)) || k < 1 || k > n || c < 0 || c > n) {
    throw new BatchError(`pass@k needs integers 0 ≤ c ≤ n and 1 ≤ k ≤ n, got n=${n} c=${c} k=${k}`);
  }
  if (n - c < k) return 1;
  let fail = 1;
  for (let i = n - c + 1; i <= n; i++) fail *= 1 - k / i;
  return 1 - fail;
}

/** 1 − Var(R − V)/(Var(R) + 1e-5) over masked tokens (sample variances). */
export function explainedVariance(values: Numbers, returns: Numbers, mask: Numbers): number {
  const r = masked(returns, mask);
  const v = masked(values, mask);
  return 1 - sampleVar(r.map((x, i) => x - v[i])) / (sampleVar(r) + 1e-5);
}

export interface BatchMetricsInput {
  readonly batch: Batch;
  /** Groups the filter kept (in_group_std/kept); defaults to all groups. */
  readonly keptGroupIds?: readonly string[];
  /** k values of pass@k (default [1]). */
  readonly passK?: readonly number[];
  /** [B, T] critic values and value targets, for explained variance. */
  readonly values?: Numbers;
  readonly returns?: Numbers;
  /** [B, T] per-token policy entropy. */
  readonly entropy?: Numbers;
}

export function batchMetrics(input: BatchMetricsInput): Record<string, number> {
  const { batch, values, returns, entropy } = input;
  const metrics: Record<string, number> = {
    ...outcomeMetrics(input),
    ...lengthMetrics(batch, input.keptGroupIds),
    ...actionMetrics(batch),
  };
  if (values && returns) metrics[VALUES_EXPLAINED_VARIANCE] = explainedVariance(values, returns, batch.lossMask);
  if (entropy) metrics[ENTROPY_MEAN] = maskedMean(entropy, batch.lossMask);
  return metrics;
}

/** How far the recomputed old log-probs are from the behaviour (sampling) log-probs, over the mask. */
export function behaviourGap(recomputed: Numbers, behaviour: Numbers, mask: Numbers): Record<string, number> {
  const sampled = masked(behaviour, mask);
  const gaps = masked(recomputed, mask).map((x, i) => Math.abs(x - sampled[i]));
  return {
    'logprobs/behaviour_gap_mean': mean(gaps),
    'logprobs/behaviour_gap_max': gaps.reduce((m, g) => Math.max(m, g), 0),
  };
}

function outcomeMetrics(input: BatchMetricsInput): Record<string, number> {
  const { batch, keptGroupIds, passK = [1] } = input;
  const ts = batch.trajectories;
  const returns = ts.map(trajectoryReturn);
  const groups = groupRows(ts);
  const groupStd = groups.rows.map((rows) => sampleStd(rows.map((r) => returns[r])));
  const keep = new Set(keptGroupIds ?? groups.ids);
  const out: Record<string, number> = {
    [SUCCESS_RATE]: mean(ts.map((t) => (t.success ? 1 : 0))),
    [RETURN_MEAN]: mean(returns),
    [RETURN_STD]: sampleStd(returns),
    [IN_GROUP_STD_ALL]: mean(groupStd),
    [IN_GROUP_STD_KEPT]: mean(groupStd.filter((_, g) => keep.has(groups.ids[g]))),
    'kept/trajectories': rowsOfGroups(ts, [...keep]).length,
  };
  for (const k of passK) {
    const eligible = groups.rows.filter((rows) => rows.length >= k);
    if (eligible.length === 0) continue;
    out[passAtKMetric(k)] = mean(
      eligible.map((rows) => passAtK(rows.length, rows.filter((r) => ts[r].success).length, k)),
    );
  }
  return out;
}

function lengthMetrics(batch: Batch, keptGroupIds?: readonly string[]): Record<string, number> {
  const lengths: number[] = [];
  for (let b = 0; b < batch.B; b++) lengths.push(sum(batch.lossMask.subarray(b * batch.T, (b + 1) * batch.T)));
  const kept = keptGroupIds && rowsOfGroups(batch.trajectories, keptGroupIds);
  return {
    [TOKENS_GENERATED]: sum(lengths),
    ...(kept ? { [KEPT_TOKENS]: sum(kept.map((r) => lengths[r])) } : {}),
    [RESPONSE_LENGTH_MEAN]: mean(lengths),
    'response_length/max': lengths.length === 0 ? 0 : Math.max(...lengths),
    'response_length/min': lengths.length === 0 ? 0 : Math.min(...lengths),
    'turns/mean': mean(batch.trajectories.map((t) => t.turns.length)),
  };
}

function actionMetrics(batch: Batch): Record<string, number> {
  const turns = batch.trajectories.flatMap((t) => t.turns);
  const proposed = sum(turns.map((t) => t.actionsProposed));
  const ratio = (x: number) => (proposed === 0 ? 0 : x / proposed);
  return {
    'actions/valid_ratio': ratio(sum(turns.map((t) => t.actionsValid))),
    'actions/effective_ratio': ratio(sum(turns.map((t) => t.actionsEffective))),
    'actions/per_turn': mean(turns.map((t) => t.actionsProposed)),
    format_penalty_rate: mean(turns.map((t) => (t.formatPenalty !== 0 ? 1 : 0))),
  };
}
