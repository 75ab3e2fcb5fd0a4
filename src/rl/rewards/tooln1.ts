/**
 * Tool-N1: 1 iff the response reasons in <think> tags (every turn of a multi-turn trajectory) and its calls
 * equal the expected multiset exactly, else 0.
 */
import { StarpoError } from '../../errors.ts';
import { formatScore, hasThink } from './format.ts';
import { sameCallMultiset } from './toolrl.ts';
import type { ToolSample } from './types.ts';

export function toolN1Reward(sample: ToolSample): number {
  if (!sample.expectedCalls) throw new StarpoError('tool-n1 reward: the sample has no expectedCalls');
  if (formatScore(sample, hasThink) < 1 || sample.calls.some((c) => c.kind === 'invalid')) return 0;
  return sameCallMultiset(sample.calls, sample.expectedCalls) ? 1 : 0;
}
