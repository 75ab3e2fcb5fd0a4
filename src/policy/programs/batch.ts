/**
 * Batches as callers see them, and their conversion to program feeds.
 *
 * Callers align every per-token array with the token it describes: `lossMask[b·T + t]` says
 * whether token t of row b is trained, `logprobs[b·T + t]` is log p(token t | tokens < t), and
 * position 0 of a row never has a value (nothing predicts it). Inside the graphs row t of the
 * model predicts token t+1, so inputs are shifted left by one here and outputs shifted back.
 * Shapes are padded up to buckets (rows with an all-zero mask) so programs compile once per bucket.
 */
import { ConfigError } from '../../errors.ts';
import type { FloatDType } from '../graph/graph.ts';

export interface SequenceBatch {
  readonly batch: number;
  readonly seqLen: number;
  /** [batch · seqLen] token ids, row-major. */
  readonly tokens: Int32Array;
  /** [batch · seqLen] 1 for real tokens, 0 for padding (left or right). */
  readonly attentionMask: Float32Array;
  /**
   * Scoring only: [batch · seqLen] token-aligned, 1 where the caller reads token t's log-prob and entropy. An
   * actor's LM head then runs on those positions alone (head-rows.ts) and every other position comes back 0.
   * Absent: every token. A critic's values come for every token whatever it says; training reads the lossMask.
   */
  readonly headMask?: Float32Array;
}

/** A training batch; which per-token arrays are required depends on the loss (see loss.ts). */
export interface TrainBatch extends SequenceBatch {
  readonly lossMask: Float32Array;
  readonly advantages?: Float32Array;
  readonly oldLogprobs?: Float32Array;
  readonly refLogprobs?: Float32Array;
  readonly returns?: Float32Array;
  readonly oldValues?: Float32Array;
}

/** Loss input name (graph) → TrainBatch field. */
export const LOSS_FIELDS = {
  advantages: 'advantages',
  old_logprobs: 'oldLogprobs',
  ref_logprobs: 'refLogprobs',
  returns: 'returns',
  old_values: 'oldValues',
} as const satisfies Record<string, keyof TrainBatch>;

export interface Bucket {
  readonly batch: number;
  readonly seqLen: number;
  /** Rows are packed prefixes and segments (prefix-pack.ts): programs take a `segments` input. */
  readonly packed?: boolean;
  /** The LM head runs on this many of the bucket's positions (head-rows.ts); absent: on every one. */
  readonly heads?: number;
}

export function bucketFor(b: SequenceBatch, seqMultiple: number, batchMultiple: number): Bucket {
  const up = (x: number, m: number) => Math.ceil(x / m) * m;
  return { batch: up(b.batch, batchMultiple), seqLen: up(b.seqLen, seqMultiple) };
}

export function checkBatch(b: SequenceBatch, fields: readonly string[] = []): void {
  const n = b.batch * b.seqLen;
  if (!(b.batch > 0 && b.seqLen > 1)) {
    throw new ConfigError('batch', `needs batch >= 1 and seqLen >= 2 (got ${b.batch}×${b.seqLen})`);
  }
  for (const f of ['tokens', 'attentionMask', ...fields]) {
    const a = (b as unknown as Record<string, ArrayLike<number> | undefined>)[f];
    if (!a) throw new ConfigError(`batch.${f}`, 'is required by this loss');
    if (a.length !== n) throw new ConfigError(`batch.${f}`, `has ${a.length} values for ${b.batch}×${b.seqLen}`);
  }
}

/** Copies [b, t] values into a [B, T] bucket, shifted left by `shift` tokens (0 or 1). */
export function place(
  src: ArrayLike<number>,
  from: Bucket,
  to: Bucket,
  shift: number,
  float: FloatDType,
): Float32Array | Float64Array {
  const out = float === 'float64' ? new Float64Array(to.batch * to.seqLen) : new Float32Array(to.batch * to.seqLen);
  for (let b = 0; b < from.batch; b++) {
    for (let t = shift; t < from.seqLen; t++) out[b * to.seqLen + t - shift] = src[b * from.seqLen + t];
  }
  return out;
}

export function placeInt(src: ArrayLike<number>, from: Bucket, to: Bucket, shift: number): BigInt64Array {
  const out = new BigInt64Array(to.batch * to.seqLen);
  for (let b = 0; b < from.batch; b++) {
    for (let t = shift; t < from.seqLen; t++) out[b * to.seqLen + t - shift] = BigInt(src[b * from.seqLen + t]);
  }
  return out;
}

/** HF position ids: running count of real tokens minus one (so left padding does not shift positions). */
export function positionsOf(mask: ArrayLike<number>, rows: number, cols: number): BigInt64Array {
  const out = new BigInt64Array(rows * cols);
  for (let b = 0; b < rows; b++) {
    let seen = 0;
    for (let t = 0; t < cols; t++) {
      if (mask[b * cols + t] > 0.5) seen++;
      out[b * cols + t] = BigInt(Math.max(seen - 1, 0));
    }
  }
  return out;
}

/** Row outputs [B, T] (row t about token t+1) back to the caller's alignment [b, t] (token t). */
export function unshift(rows: ArrayLike<number>, from: Bucket, to: Bucket): Float32Array {
  const out = new Float32Array(to.batch * to.seqLen);
  for (let b = 0; b < to.batch; b++) {
    for (let t = 1; t < to.seqLen; t++) out[b * to.seqLen + t] = rows[b * from.seqLen + t - 1];
  }
  return out;
}

/**
 * The whole mini-batch's loss denominators (train programs' `token_count`, `sequence_count`):
 * trained tokens and rows with any, where token 0 of a row never counts (nothing predicts it).
 */
export function trainNorm(b: TrainBatch): { tokens: number; sequences: number } {
  let [tokens, sequences] = [0, 0];
  for (let r = 0; r < b.batch; r++) {
    let n = 0;
    for (let t = 1; t < b.seqLen; t++) n += b.lossMask[r * b.seqLen + t];
    [tokens, sequences] = [tokens + n, sequences + (n > 0 ? 1 : 0)];
  }
  return { tokens: Math.max(tokens, 1), sequences: Math.max(sequences, 1) };
}

/**
 * The calls that cover `total` rows at most `rows` at a time, as [start, count]: full calls, then the remainder as a
 * call of its own size (a program of that shape) rather than a full one padded with empty rows, which would cost as
 * much as real ones.
 */
export function rowCalls(total: number, rows: number): [number, number][] {
  const out: [number, number][] = [];
  for (let start = 0; start < total; start += rows) out.push([start, Math.min(rows, total - start)]);
  return out;
}

/** Rows [start, start + count) of a batch as their own batch (views; rows past the end are padding). */
export function sliceRows<B extends SequenceBatch>(b: B, start: number, count: number): B {
  const T = b.seqLen;
  const cut = <A extends Float32Array | Int32Array>(a: A): A => {
    if (start + count <= b.batch) return a.subarray(start * T, (start + count) * T) as A;
    const out = new (a.constructor as new (n: number) => A)(count * T);
    out.set(a.subarray(start * T, b.batch * T));
    return out;
  };
  const fields = Object.entries(b).map(([k, v]) => [
    k,
    v instanceof Float32Array || v instanceof Int32Array ? cut(v) : v,
  ]);
  return { ...Object.fromEntries(fields), batch: count } as B;
}
