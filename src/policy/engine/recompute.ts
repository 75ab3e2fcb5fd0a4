/**
 * Greedy generation without a KV cache: every step runs the prefill program over the whole
 * prefix. It is the baseline the cached decode is measured against, and a second way of computing
 * the same tokens.
 */
import { promptFeeds } from './generate.ts';
import { type Policy, weightFeeds } from './policy.ts';

export interface GreedyStep {
  readonly tokens: number[];
  readonly logprobs: number[];
}

/** Greedy next token and its log-prob for each left-padded prefix (prefix lengths padded to `multiple`). */
export async function greedyNext(policy: Policy, prefixes: readonly (readonly number[])[], multiple = 1): Promise<GreedyStep> {
  const T = Math.ceil(Math.max(...prefixes.map((p) => p.length)) / multiple) * multiple;
  const session = await policy.programs.prefill({ batch: prefixes.length, promptLen: T, cacheLen: T });
  const feeds = { ...weightFeeds(policy.layout, policy.getParams(), policy.getBase()), ...promptFeeds(prefixes, T, T).feeds };
  const out = await session.run(feeds, ['greedy_token', 'greedy_logprob']);
  const tokens = Array.from(out.greedy_token.data as BigInt64Array, Number);
  return { tokens, logprobs: Array.from(out.greedy_logprob.data as Float32Array) };
}

/** maxNewTokens greedy tokens per prompt, recomputing the full prefix each step (no stop tokens). */
export async function generateWithoutCache(
  policy: Policy,
  prompts: readonly (readonly number[])[],
  maxNewTokens: number,
): Promise<number[][]> {
  const seqs = prompts.map((p) => [...p]);
  for (let s = 0; s < maxNewTokens; s++) {
    const next = await greedyNext(policy, seqs, 16);
    seqs.forEach((q, b) => q.push(next.tokens[b]));
  }
  return seqs.map((q, b) => q.slice(prompts[b].length));
}
