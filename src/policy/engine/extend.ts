/**
 * Runs the extend program (programs/generate.ts) over a batch: each row's tokens from its `start` on are
 * computed against its cache below `start`, in row chunks whose attention scores (rows·H·N·S) fit the
 * budget, and their keys and values are written into the cache. Returns the head outputs of each row's
 * last token, concatenated over the chunks.
 */
import { StarpoError } from '../../errors.ts';
import { cacheName, newName } from '../programs/generate.ts';
import type { BatchCache } from './kv-cache.ts';
import type { GenerationPrograms } from './programs.ts';
import { type OrtTensor, tensor } from './session.ts';

export interface ExtendRows {
  readonly prompts: readonly (readonly number[])[];
  /** Per row: tokens already in the cache (its slots below start hold their keys and values); < prompt length. */
  readonly starts: readonly number[];
}

const up = (x: number, m: number): number => Math.ceil(x / m) * m;

/**
 * Cache slots for prompts: the longest and one slot more, rounded up to 32 (programs are reused). Padding tokens
 * write the last slot (extendFeeds), so no prompt may hold it.
 */
export function extendSlots(prompts: readonly (readonly number[])[]): number {
  return up(Math.max(...prompts.map((p) => p.length)) + 1, 32);
}

/** The new-token width (rows' new tokens padded to `multiple`) and rows per call of an extend over `rows`. */
export function extendShape(rows: ExtendRows, heads: number, slots: number, multiple: number, budget: number) {
  const newLen = up(Math.max(...rows.prompts.map((p, b) => p.length - rows.starts[b])), multiple);
  const B = rows.prompts.length;
  // At least two rows per call: the LM head of a one-row call runs onnxruntime's matrix-vector kernel,
  // whose sums differ from the kernel every larger call uses (a row would sample differently alone).
  const chunk = largestDivisor(B, (r) => r * heads * newLen * slots <= budget);
  return { newLen, chunk };
}

export async function extend(
  programs: GenerationPrograms,
  params: Record<string, OrtTensor>,
  cache: BatchCache,
  rows: ExtendRows,
  multiple: number,
  budget: number,
  heads: readonly string[],
): Promise<Record<string, OrtTensor>> {
  const { numHeads, numLayers } = programs.layout.config;
  if (rows.prompts.some((p) => p.length >= cache.slots))
    throw new StarpoError(`extend: a prompt fills the cache's ${cache.slots} slots; its padding would overwrite it`);
  const { newLen: N, chunk: r } = extendShape(rows, numHeads, cache.slots, multiple, budget);
  const session = await programs.extend({ batch: r, newLen: N, cacheLen: cache.slots });
  const counts = rows.prompts.map((p, b) => p.length - rows.starts[b]);
  const kinds = [...Array(numLayers).keys()].flatMap((i) =>
    (['k', 'v'] as const).map((kind) => [cacheName(kind, i), newName(kind, i)]),
  );
  const outputs = kinds.map(([, nm]) => nm);
  const parts: Record<string, OrtTensor>[] = [];
  for (let from = 0; from < cache.batch; from += r) {
    const feeds = { ...params, ...extendFeeds(rows, from, r, N, cache.slots), ...cache.tensors(from, r) };
    const out = await session.run(feeds, [...heads, ...outputs]);
    const fresh = Object.fromEntries(kinds.map(([slot, nm]) => [slot, out[nm].data as Float32Array]));
    cache.write(fresh, N, from, rows.starts, counts);
    parts.push(Object.fromEntries(heads.map((h) => [h, out[h]])));
  }
  return concatRows(parts);
}

/** tokens, positions [r, N] and last [r] of rows from … from + r − 1; padding sits at the last slot. */
function extendFeeds(rows: ExtendRows, from: number, r: number, N: number, S: number): Record<string, OrtTensor> {
  const tokens = new BigInt64Array(r * N);
  const positions = new BigInt64Array(r * N).fill(BigInt(S - 1));
  const last = new BigInt64Array(r);
  for (let i = 0; i < r; i++) {
    const [p, start] = [rows.prompts[from + i], rows.starts[from + i]];
    for (let t = start; t < p.length; t++) {
      tokens[i * N + t - start] = BigInt(p[t]);
      positions[i * N + t - start] = BigInt(t);
    }
    last[i] = BigInt(i * N + p.length - start - 1);
  }
  return {
    tokens: tensor('int64', [r, N], tokens),
    positions: tensor('int64', [r, N], positions),
    last: tensor('int64', [r], last),
  };
}

/** Row-wise concatenation of the chunks' head outputs (logits, or the greedy token and log-prob). */
function concatRows(chunks: Record<string, OrtTensor>[]): Record<string, OrtTensor> {
  if (chunks.length === 1) return chunks[0];
  const cat = (name: string): OrtTensor => {
    const parts = chunks.map((c) => c[name]);
    const size = parts.reduce((s, p) => s + p.size, 0);
    const data = parts[0].data instanceof BigInt64Array ? new BigInt64Array(size) : new Float32Array(size);
    let at = 0;
    for (const p of parts) {
      data.set(p.data as never, at);
      at += p.size;
    }
    const dims = [parts.reduce((s, p) => s + p.dims[0], 0), ...parts[0].dims.slice(1)];
    return tensor(data instanceof BigInt64Array ? 'int64' : 'float32', dims, data);
  };
  return Object.fromEntries(Object.keys(chunks[0]).map((k) => [k, cat(k)]));
}

/** The largest divisor d ≥ 2 of n with fits(d) (2 when none fits; n itself when n < 2). */
function largestDivisor(n: number, fits: (d: number) => boolean): number {
  for (let d = n; d > 2; d--) if (n % d === 0 && fits(d)) return d;
  return Math.min(n, 2);
}
