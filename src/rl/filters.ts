/**
 * Rollout filters: which environment groups of a batch are trained on (StarPO-S and neighbours).
 * A filter reads trajectory returns/success per group and returns the kept group ids, in order of
 * first appearance in the batch (never re-sorted, so downstream row order is stable), plus metrics.
 *
 * Group std is the sample (n−1) std of trajectory returns (see stats.ts); a group of one has std 0.
 *
 * Top/bottom fraction rounding: keep k = ⌈fraction·G − 1e-9⌉ groups, clamped to [1, G] (0 when G = 0).
 * Ceil rather than RAGEN's int() floor, so a small batch never keeps zero groups; the 1e-9 absorbs
 * float error (0.1·30 = 3.0000000000000004 must keep 3, not 4). Published 0.25 × 8 groups → 2.
 * Ties in std are broken by first appearance: the earlier group wins (a stable sort), so equal
 * inputs always keep the same groups.
 */
import { type TrajectoryRecord, groupRows, trajectoryReturn } from './batch.ts';
import { allEqual, mean, sampleStd } from './stats.ts';
import { FILTER_IN_GROUP_STD_ALL, FILTER_IN_GROUP_STD_KEPT } from './metric-names.ts';

export type FilterName = 'top-std' | 'bottom-std' | 'nonzero-std' | 'accuracy-band' | 'snr-top-p' | 'none';

export interface FilterParams {
  /** Fraction of groups kept by top-std / bottom-std, in (0, 1]. */
  readonly fraction: number;
  /** accuracy-band: keep groups whose mean success s satisfies lo < s < hi (strict). */
  readonly band: readonly [lo: number, hi: number];
  /** snr-top-p: share p of the total std the kept groups must reach, and the ε taken off that threshold. */
  readonly topP?: number;
  readonly topPEps?: number;
}

export interface FilterInput {
  readonly trajectories: readonly TrajectoryRecord[];
  readonly params: FilterParams;
}

export interface FilterOutput {
  readonly keptGroupIds: readonly string[];
  readonly metrics: Record<string, number>;
}

/** Per-group facts a filter decides on, in order of first appearance. */
export interface GroupSummary {
  readonly id: string;
  readonly returnStd: number;
  readonly successRate: number;
  /** All trajectory returns identical (std exactly 0). */
  readonly allEqual: boolean;
}

export function summariseGroups(trajectories: readonly TrajectoryRecord[]): GroupSummary[] {
  const { ids, rows } = groupRows(trajectories);
  return ids.map((id, g) => {
    const returns = rows[g].map((r) => trajectoryReturn(trajectories[r]));
    const successes = rows[g].map((r) => (trajectories[r].success ? 1 : 0));
    return { id, returnStd: sampleStd(returns), successRate: mean(successes), allEqual: allEqual(returns) };
  });
}

/** Chooses kept groups (indices into the summaries). */
type Choose = (groups: readonly GroupSummary[], params: FilterParams) => number[];
export type FilterFn = (input: FilterInput) => FilterOutput;

/** k = ⌈fraction·G − 1e-9⌉ clamped to [1, G]; see the module comment. */
export function keepCount(fraction: number, groupCount: number): number {
  if (groupCount === 0) return 0;
  return Math.min(groupCount, Math.max(1, Math.ceil(fraction * groupCount - 1e-9)));
}

function byStd(direction: 1 | -1): Choose {
  return (groups, params) => {
    const order = groups.map((_, i) => i);
    // Array.prototype.sort is stable: equal std keeps first-appearance order (the documented tie-break).
    order.sort((a, b) => direction * (groups[b].returnStd - groups[a].returnStd));
    return order.slice(0, keepCount(params.fraction, groups.length)).sort((a, b) => a - b);
  };
}

function where(pred: (g: GroupSummary, params: FilterParams) => boolean): Choose {
  return (groups, params) => groups.flatMap((g, i) => (pred(g, params) ? [i] : []));
}

/**
 * RAGEN-2's SNR-adaptive filter (ragen/trainer/rollout_filter.py: strategy top_p, top_p_prob_mode linear,
 * metric reward_variance — the in-group std —, type largest, include_zero False, as its guide recommends):
 * drop groups whose std is 0 (|std| ≤ 1e-10); if p ≥ 1 keep the rest; else walk them by std, largest
 * first, adding each std until the sum reaches p · Σ std − ε; keep those. When the sum never reaches the
 * threshold nothing is kept, and the iteration trains on nothing (RAGEN-2 skips the step).
 */
const snrTopP: Choose = (groups, params) => {
  const candidates = groups.map((_, i) => i).filter((i) => Math.abs(groups[i].returnStd) > 1e-10);
  const p = params.topP ?? 0.9;
  if (p >= 1) return candidates;
  const order = [...candidates].sort((a, b) => groups[b].returnStd - groups[a].returnStd);
  const threshold = p * candidates.reduce((s, i) => s + groups[i].returnStd, 0) - (params.topPEps ?? 0.01);
  let sum = 0;
  let kept = 0;
  for (const i of order) {
    if (sum >= threshold || groups[i].returnStd <= 0) break;
    sum += groups[i].returnStd;
    kept++;
  }
  return sum >= threshold ? order.slice(0, kept).sort((a, b) => a - b) : [];
};

const CHOOSERS = {
  /** StarPO-S: the groups whose returns vary most. */
  'top-std': byStd(1),
  /** Ablation: the groups whose returns vary least. */
  'bottom-std': byStd(-1),
  /** Drop groups whose returns are all equal (they carry no relative signal). */
  'nonzero-std': where((g) => !g.allEqual),
  /** ZeroTIR: keep groups neither always failing nor too easy. */
  'accuracy-band': where((g, p) => g.successRate > p.band[0] && g.successRate < p.band[1]),
  'snr-top-p': snrTopP,
  none: where(() => true),
} as const satisfies Record<FilterName, Choose>;

function asFilter(choose: Choose): FilterFn {
  return ({ trajectories, params }) => {
    const groups = summariseGroups(trajectories);
    const kept = choose(groups, params);
    return { keptGroupIds: kept.map((i) => groups[i].id), metrics: filterMetrics(groups, kept) };
  };
}

export const FILTERS = {
  'top-std': asFilter(CHOOSERS['top-std']),
  'bottom-std': asFilter(CHOOSERS['bottom-std']),
  'nonzero-std': asFilter(CHOOSERS['nonzero-std']),
  'accuracy-band': asFilter(CHOOSERS['accuracy-band']),
  'snr-top-p': asFilter(CHOOSERS['snr-top-p']),
  none: asFilter(CHOOSERS.none),
} as const satisfies Record<FilterName, FilterFn>;

export const FILTER_NAMES = Object.keys(FILTERS) as FilterName[];

/**
 * filter/in_group_std_all: mean group std over all groups; filter/in_group_std_kept: over kept groups
 * (0 when none); filter/kept_fraction: kept groups / groups (0 when there are no groups).
 */
function filterMetrics(groups: readonly GroupSummary[], kept: readonly number[]): Record<string, number> {
  return {
    'filter/groups': groups.length,
    'filter/kept_groups': kept.length,
    'filter/kept_fraction': groups.length === 0 ? 0 : kept.length / groups.length,
    [FILTER_IN_GROUP_STD_ALL]: mean(groups.map((g) => g.returnStd)),
    [FILTER_IN_GROUP_STD_KEPT]: mean(kept.map((i) => groups[i].returnStd)),
  };
}
