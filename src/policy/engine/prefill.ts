/**
 * The prefill of a generate call: each row's cache starts with the longest prefix of its prompt the
 * PrefixCache holds (a rollout's previous turn), the extend program computes the rest, and the prompt is
 * kept for the next call. Before that, prefixes several rows share beyond what the cache holds (a group's
 * first prompt, the system prompt of every row) are computed once, for one row each, into the cache.
 * Without a PrefixCache every row is prefilled from position 0. Either way a row gets the same numbers.
 */
import { BatchCache } from './kv-cache.ts';
import { extend, extendSlots } from './extend.ts';
import { type PrefixCache, commonPrefix } from './prefix-cache.ts';
import type { GenerationPrograms } from './programs.ts';
import type { OrtTensor } from './session.ts';

/** Token counts of a policy's generate calls (cumulative; benchmarks read them). */
export interface GenerationStats {
  /** Prompt tokens the rows computed themselves (padding not counted). */
  prefilled: number;
  /** Tokens of shared prefixes computed once for several rows (before the rows' own prefill). */
  shared: number;
  /** Prompt tokens the rows found in the PrefixCache or took from an identical prompt of the call (not computed). */
  reused: number;
  /** Prompt tokens of the calls' rows (what a prefill without the PrefixCache computes). */
  prompt: number;
  /** Row-steps of the decode program (finished rows and padding rows included). */
  decoded: number;
  /** Wall seconds of the prefills (shared prefixes included) and of the decode loops. */
  prefillSeconds: number;
  decodeSeconds: number;
}

export const emptyStats = (): GenerationStats => ({
  prefilled: 0,
  shared: 0,
  reused: 0,
  prompt: 0,
  decoded: 0,
  prefillSeconds: 0,
  decodeSeconds: 0,
});

export interface PrefillContext {
  readonly programs: GenerationPrograms;
  readonly params: Record<string, OrtTensor>;
  /** New tokens per row are padded to a multiple of this, so programs are reused. */
  readonly multiple: number;
  readonly attentionBudget: number;
  readonly store: PrefixCache | null;
  readonly stats: GenerationStats;
}

/** A shared prefix is computed on its own only when it saves at least this many tokens per row. */
export const MIN_SHARED = 16;

const up = (x: number, m: number): number => Math.ceil(x / m) * m;

/**
 * Batch sizes generation compiles for: 2, 4, 8, then multiples of 8 up to 64, then of 32 (see extend.ts on one row).
 */
export function batchBucket(n: number): number {
  return n <= 8 ? Math.max(2, 2 ** Math.ceil(Math.log2(n))) : up(n, n <= 64 ? 8 : 32);
}

/** Prompts, then one-token dummy rows (never sampled) up to their batch bucket. */
export function padToBucket(prompts: readonly (readonly number[])[]): (readonly number[])[] {
  return [...prompts, ...Array<number[]>(batchBucket(prompts.length) - prompts.length).fill([0])];
}

/**
 * The rows' caches over `slots` slots, filled through each prompt's last token (the first `real` rows also
 * from and into the store), the heads of that token, and how many tokens of each row came from the store.
 */
export async function prefill(
  ctx: PrefillContext,
  prompts: readonly (readonly number[])[],
  real: number,
  slots: number,
  heads: readonly string[],
): Promise<{ cache: BatchCache; out: Record<string, OrtTensor>; starts: number[] }> {
  const cache = new BatchCache(ctx.programs.layout.config, prompts.length, slots);
  const starts = prompts.map((p, b) => {
    const found = b < real ? ctx.store?.match(p, p.length - 1) : null; // the last token is computed: its head is needed
    if (found) cache.load(b, found.kv, found.length);
    return found?.length ?? 0;
  });
  const out = await extend(
    ctx.programs,
    ctx.params,
    cache,
    { prompts, starts },
    ctx.multiple,
    ctx.attentionBudget,
    heads,
  );
  if (ctx.store) keep(ctx.store, cache, prompts.slice(0, real));
  return { cache, out, starts };
}

/**
 * Adds the rows' prompts to the store, in row order while they fit its budget together: copying rows that
 * later rows of the same call would evict again is wasted work (which rows are kept never changes results).
 */
function keep(store: PrefixCache, cache: BatchCache, prompts: readonly (readonly number[])[]): void {
  const perToken = cache.names.length * cache.floatsPerSlot;
  let room = store.budget;
  prompts.forEach((p, b) => {
    if (p.length * perToken > room || store.match(p)?.length === p.length) return; // too large, or kept already
    room -= p.length * perToken;
    store.add(p, cache.save(b, p.length));
  });
}

/**
 * Computes into the store, once each, the prefixes rows share beyond what it holds for them: each row's
 * longest common prefix with another row (short of its last token, which the row computes for its head),
 * when that saves MIN_SHARED tokens.
 */
export async function sharePrefixes(ctx: PrefillContext, prompts: readonly (readonly number[])[]): Promise<void> {
  if (ctx.store)
    await computeShared(
      ctx,
      sharedPrefixes(ctx.store, prompts, (p) => p.length - 1),
    );
}

/** The keys' own shared prefixes first (a system prompt under several groups' prompts), then the keys. */
async function computeShared(ctx: PrefillContext, keys: readonly (readonly number[])[]): Promise<void> {
  if (keys.length === 0) return;
  // Terminates: the longest key is never a prefix of another, so the keys' prefixes are fewer tokens in all.
  await computeShared(
    ctx,
    sharedPrefixes(ctx.store!, keys, (k) => k.length),
  );
  const padded = padToBucket(keys);
  const { starts } = await prefill(ctx, padded, keys.length, extendSlots(keys), ['greedy_token']);
  keys.forEach((k, i) => (ctx.stats.shared += k.length - starts[i]));
}

/**
 * The distinct prefixes (at most `cap` tokens of each prompt) that prompts share and the store
 * lacks MIN_SHARED tokens of.
 */
function sharedPrefixes(
  store: PrefixCache,
  prompts: readonly (readonly number[])[],
  cap: (p: readonly number[]) => number,
): number[][] {
  const keys = new Map<string, number[]>();
  if (prompts.length < 2) return [];
  sharedLengths(prompts).forEach((n, b) => {
    const key = prompts[b].slice(0, Math.min(n, cap(prompts[b])));
    if (key.length - (store.match(key)?.length ?? 0) >= MIN_SHARED) keys.set(key.join(','), key);
  });
  return [...keys.values()];
}

/** Per prompt: its longest common prefix with any other prompt (its neighbours in sorted order). */
export function sharedLengths(prompts: readonly (readonly number[])[]): number[] {
  const order = prompts.map((_, i) => i).sort((a, b) => compare(prompts[a], prompts[b]));
  const out = new Array<number>(prompts.length).fill(0);
  for (let k = 0; k + 1 < order.length; k++) {
    const [a, b] = [order[k], order[k + 1]];
    const n = commonPrefix(prompts[a], prompts[b]);
    out[a] = Math.max(out[a], n);
    out[b] = Math.max(out[b], n);
  }
  return out;
}

function compare(a: readonly number[], b: readonly number[]): number {
  const n = commonPrefix(a, b);
  if (n === a.length || n === b.length) return a.length - b.length;
  return a[n] - b[n];
}
