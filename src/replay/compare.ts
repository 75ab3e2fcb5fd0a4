/**
 * Recorded vs recomputed metrics of one iteration. Every recorded metric is either checked (it depends
 * only on trajectories, so replay recomputed it) or listed as not recomputable, with the reason: those
 * need model outputs or the update step, which the event log does not hold.
 *
 * Equality: the recomputation runs the trainer's code on the same doubles in the same order, so the
 * values are expected to be bit-identical; a relative tolerance of 1e-12 only forgives a build that sums
 * in a different order, and is far below any real disagreement (one trajectory in 10^4 moves a mean 1e-4).
 */
import type { IterationEvent } from '../events/index.ts';
import {
  IN_GROUP_STD_ALL,
  RETURN_MEAN,
  RETURN_STD,
  SUCCESS_RATE,
  VAL_SUCCESS_RATE,
  modelMetric,
  valMetric,
} from '../rl/metric-names.ts';

export interface Mismatch {
  metric: string;
  recorded: number;
  recomputed: number;
}

export interface Comparison {
  /** Recorded metrics replay recomputed and compared. */
  checked: string[];
  mismatches: Mismatch[];
  /** Recorded metrics replay cannot recompute from events (see WHY_NOT). */
  notRecomputable: string[];
}

const TOLERANCE = 1e-12;

/** Why a metric cannot come from trajectory events, by prefix (first match wins). */
export const WHY_NOT: ReadonlyArray<readonly [prefix: string, reason: string]> = [
  ['entropy/', "needs the policy's token distributions"],
  [modelMetric('actor', ''), 'comes from the update step (losses, gradient norm, clipping, KL)'],
  [modelMetric('critic', ''), 'comes from the critic update'],
  ['values/', "needs the critic's values"],
  ['returns/', 'value targets need the critic (GAE) and token positions'],
  ['advantages/', 'need token-level rewards and critic values'],
  ['sft/', 'comes from the supervised warm-start'],
  ['tis/', "needs the training policy's recomputed log-probs"],
  ['collapse/', "needs the policy's log-probabilities (events before schema v5 carry no probe)"],
];

export function whyNot(metric: string): string {
  return (
    WHY_NOT.find(([prefix]) => metric.startsWith(prefix) || metric.startsWith(valMetric(prefix)))?.[1] ??
    'not derived from trajectories'
  );
}

/** The IterationEvent's own summary fields and the metric each copies. */
const SUMMARY_FIELDS = [
  ['successRateTrain', SUCCESS_RATE],
  ['successRateVal', VAL_SUCCESS_RATE],
  ['returnMean', RETURN_MEAN],
  ['returnStd', RETURN_STD],
  ['inGroupReturnStd', IN_GROUP_STD_ALL],
] as const satisfies ReadonlyArray<readonly [keyof IterationEvent, string]>;

export function sameNumber(a: number, b: number): boolean {
  if (a === b || (Number.isNaN(a) && Number.isNaN(b))) return true;
  return Math.abs(a - b) <= TOLERANCE * Math.max(1, Math.abs(a), Math.abs(b));
}

/** What the event recorded: its metrics map plus its summary fields (named `event.<field>`). */
function recordedValues(e: IterationEvent): [name: string, value: number, source: string][] {
  const out: [string, number, string][] = Object.entries(e.metrics).map(([k, v]) => [k, v, k]);
  for (const [field, source] of SUMMARY_FIELDS) {
    const value = e[field];
    if (value !== null) out.push([`event.${field}`, value, source]); // successRateVal is null without validation
  }
  return out;
}

export function compareMetrics(recorded: IterationEvent, recomputed: Readonly<Record<string, number>>): Comparison {
  const result: Comparison = { checked: [], mismatches: [], notRecomputable: [] };
  for (const [name, value, source] of recordedValues(recorded)) {
    const mine = recomputed[source];
    if (mine === undefined) {
      if (!name.startsWith('event.')) result.notRecomputable.push(name);
      continue;
    }
    result.checked.push(name);
    if (!sameNumber(value, mine)) result.mismatches.push({ metric: name, recorded: value, recomputed: mine });
  }
  return result;
}
