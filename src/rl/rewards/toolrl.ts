/**
 * ToolRL: format ∈ {0, 1} (the response has the expected tag structure; over a multi-turn trajectory, the
 * share of well-formed turns) plus correctness ∈ [−3, 3]:
 * −3 when a call is unparsable or an expected call has no predicted call of its name left; 3 when the
 * calls equal the expected ones as a multiset of (name, canonical arguments); else 6·S/S_max − 3 with
 *   S     = Jaccard(expected names, predicted names)
 *         + Σ over expected calls, in order, of [Jaccard(parameter keys) + number of equal parameter values]
 *           against the best still-unused predicted call of the same name (ties: the earliest),
 *   S_max = 1 + Σ over expected calls of (1 + number of its parameters).
 */
import { StarpoError } from '../../errors.ts';
import type { Json } from '../../envs/types.ts';
import { canonicalJson } from '../../tools/json.ts';
import { FORMAT_CHECKS, formatScore } from './format.ts';
import { type ExpectedCall, type RewardCall, type ToolRewardOptions, type ToolSample } from './types.ts';

export function jaccard<T>(a: Iterable<T>, b: Iterable<T>): number {
  const sa = new Set(a);
  const sb = new Set(b);
  const union = new Set([...sa, ...sb]).size;
  if (union === 0) return 1;
  let both = 0;
  for (const x of sa) if (sb.has(x)) both++;
  return both / union;
}

type Args = { [key: string]: Json };

/** Same calls, as a multiset of (name, canonical JSON of the arguments). */
export function sameCallMultiset(
  predicted: readonly { name: string; arguments: Args | null }[],
  expected: readonly ExpectedCall[],
): boolean {
  const key = (c: { name: string; arguments: Args | null }) => `${c.name}\u0000${canonicalJson(c.arguments ?? {})}`;
  const a = predicted.map(key).sort();
  const b = expected.map(key).sort();
  return a.length === b.length && a.every((k, i) => k === b[i]);
}

function pairScore(expected: ExpectedCall, predicted: RewardCall): number {
  const args = predicted.arguments ?? {};
  const keys = Object.keys(expected.arguments);
  const same = (k: string) => canonicalJson(args[k] as Json) === canonicalJson(expected.arguments[k] as Json);
  const equal = keys.filter((k) => Object.hasOwn(args, k) && same(k));
  return jaccard(keys, Object.keys(args)) + equal.length;
}

export function toolrlCorrectness(calls: readonly RewardCall[], expected: readonly ExpectedCall[]): number {
  if (calls.some((c) => c.kind === 'invalid')) return -3;
  if (sameCallMultiset(calls, expected)) return 3;
  const used = new Set<number>();
  let s = jaccard(
    expected.map((c) => c.name),
    calls.map((c) => c.name),
  );
  let sMax = 1;
  for (const e of expected) {
    let best = -1;
    let bestScore = -1;
    calls.forEach((p, i) => {
      if (used.has(i) || p.name !== e.name) return;
      const score = pairScore(e, p);
      if (score > bestScore) [best, bestScore] = [i, score];
    });
    if (best < 0) return -3;
    used.add(best);
    s += bestScore;
    sMax += 1 + Object.keys(e.arguments).length;
  }
  return (6 * s) / sMax - 3;
}

export function toolrlReward(sample: ToolSample, options: ToolRewardOptions = {}): number {
  if (!sample.expectedCalls) throw new StarpoError('toolrl reward: the sample has no expectedCalls');
  const format = formatScore(sample, FORMAT_CHECKS[options.format ?? 'toolrl']);
  // All written calls count, run or not (past the limit): they are what the model predicted.
  return format + toolrlCorrectness(sample.calls, sample.expectedCalls);
}
