/**
 * Greedy generation without a KV cache: every step prefills the whole prefix afresh (the extend program
 * over an empty cache). It is the baseline the cached decode is measured against, and a second way of
 * computing the same tokens.
 */
import { extend, extendSlots } from './extend.ts';
import { BatchCache } from './kv-cache.ts';
import { type Policy, weightFeeds } from './policy.ts';
import { padToBucket } from './prefill.ts';

export interface GreedyStep {
  readonly tokens: number[];
  readonly logprobs: number[];
}

/** Greedy next token and its log-prob for each prefix (new tokens padded to `multiple`). */
export async function greedyNext(
  policy: Policy,
  prefixes: readonly (readonly number[])[],
  multiple = 1,
): Promise<GreedyStep> {
  const n = prefixes.length;
  const prompts = padToBucket(prefixes);
  const cache = new BatchCache(policy.layout.config, prompts.length, extendSlots(prefixes));
  const params = weightFeeds(policy.layout, policy.getParams(), policy.getBase());
  const starts = prompts.map(() => 0);
  const out = await extend(policy.programs, params, cache, { prompts, starts }, multiple, Infinity, [
    'greedy_token',
    'greedy_logprob',
  ]);
  const tokens = Array.from(out.greedy_token.data as BigInt64Array, Number).slice(0, n);
  return { tokens, logprobs: Array.from(out.greedy_logprob.data as Float32Array).slice(0, n) };
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
