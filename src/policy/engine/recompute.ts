/**
 * Greedy generation without a KV cache: every step runs the prefill program over the whole
 * prefix. It is the baseline the cached decode is measured against, and a second way of computing
 * the same tokens.
 */
import { positionsOf } from '../programs/batch.ts';
import type { Policy } from './policy.ts';
import { weightFeeds } from './policy.ts';
import { floatTensor, tensor } from './session.ts';

/** Greedy next token and its log-prob for each left-padded prefix (prefix lengths padded to `multiple`). */
export async function greedyNext(policy: Policy, prefixes: readonly (readonly number[])[], multiple = 1) {
  const B = prefixes.length;
  const T = Math.ceil(Math.max(...prefixes.map((p) => p.length)) / multiple) * multiple;
  const tokens = new BigInt64Array(B * T);
  const mask = new Float32Array(B * T);
  prefixes.forEach((p, b) => p.forEach((t, i) => ((tokens[b * T + T - p.length + i] = BigInt(t)), (mask[b * T + T - p.length + i] = 1))));
  const session = await policy.programs.prefill({ batch: B, promptLen: T, cacheLen: T });
  const out = await session.run({
    ...weightFeeds(policy.layout, policy.getParams()), tokens: tensor('int64', [B, T], tokens), attention_mask: floatTensor(mask, [B, T]),
    positions: tensor('int64', [B, T], positionsOf(mask, B, T)),
  }, ['greedy_token', 'greedy_logprob']);
  return { tokens: Array.from(out.greedy_token.data as BigInt64Array, Number), logprobs: Array.from(out.greedy_logprob.data as Float32Array) };
}

/** maxNewTokens greedy tokens per prompt, recomputing the full prefix each step (no stop tokens). */
export async function generateWithoutCache(policy: Policy, prompts: readonly (readonly number[])[], maxNewTokens: number): Promise<number[][]> {
  const seqs = prompts.map((p) => [...p]);
  for (let s = 0; s < maxNewTokens; s++) {
    const next = await greedyNext(policy, seqs, 16);
    seqs.forEach((q, b) => q.push(next.tokens[b]));
  }
  return seqs.map((q, b) => q.slice(prompts[b].length));
}
