/**
 * The LM head on the positions a call reads, not on all of them. Training reads the log-prob (and entropy) of its
 * trained tokens only, and the RL scoring calls read the same ones: on Sokoban at RAGEN's 8 × 16, ~120 answer tokens
 * of a ~900-token row. With SmolLM2's 49,152-token vocabulary the head is ~20% of a token's forward FLOPs (and of
 * its backward), and its logits and softmax are a program's widest tensors.
 *
 * A program of `heads` K takes `head_rows` [K], row-aligned flat indices into the bucket (row t of sequence b, which
 * predicts token t + 1, is b·T + t), and `head_inverse` [B·T], each position's index among them or K where it has
 * none: the hidden states of those rows go through the head, and their [K, 2] statistics come back as [B·T, 2] with
 * zeros elsewhere (common.ts tokenStats). K is the count rounded up to a quarter octave, so a model compiles few
 * shapes; the rows past the count repeat row 0 and no position reads them (head_inverse never points there), so
 * they add exactly 0 to every gradient. A row's statistics are the same numbers as the whole head's: each row's
 * logits, softmax and reductions are its own.
 */
import type { SequenceBatch } from './batch.ts';

/** Fewest head rows a program takes: below this the whole head of a short call costs little anyway. */
export const MIN_HEAD_ROWS = 32;

export interface HeadRows {
  /** [K] row-aligned flat positions of the bucket, the selected ones first. */
  readonly rows: BigInt64Array;
  /** [bucket rows · bucket length]: each position's index in `rows`, K for a position the head skips. */
  readonly inverse: BigInt64Array;
}

/** The head rows a program takes for `count` positions: a quarter octave at or above it (32, 40, 48, 56, 64, 80, …). */
export function headRowsFor(count: number): number {
  let step = MIN_HEAD_ROWS / 4;
  for (let k = MIN_HEAD_ROWS; ; k += step) {
    if (k >= count) return k;
    if (k === 8 * step) step *= 2;
  }
}

/**
 * A call's program shape and head rows: `bucket` with `heads` set when the head runs on the positions `mask` marks
 * (headRows), else (no mask, or headRows declines) `bucket` as it is and null.
 */
export function withHeadRows<S extends { readonly batch: number; readonly seqLen: number }>(
  mask: ArrayLike<number> | null | undefined,
  batch: Pick<SequenceBatch, 'batch' | 'seqLen'>,
  bucket: S,
): { shape: S & { heads?: number }; heads: HeadRows | null } {
  const heads = mask ? headRows(mask, batch, bucket) : null;
  return { shape: heads ? { ...bucket, heads: heads.rows.length } : bucket, heads };
}

/**
 * The rows a call's LM head runs on: every position t of row b whose next token the `mask` (token-aligned, as the
 * batch's: mask[b·S + t + 1], S the batch's length) marks, in the bucket's row alignment; null when the head over
 * them would not take at most half the bucket's positions (then the whole head runs, as without a mask).
 */
export function headRows(
  mask: ArrayLike<number>,
  batch: Pick<SequenceBatch, 'batch' | 'seqLen'>,
  bucket: { readonly batch: number; readonly seqLen: number },
): HeadRows | null {
  const [S, T] = [batch.seqLen, bucket.seqLen];
  const picked: number[] = [];
  for (let b = 0; b < batch.batch; b++) {
    for (let t = 0; t + 1 < S; t++) if (mask[b * S + t + 1] > 0) picked.push(b * T + t);
  }
  const positions = bucket.batch * T;
  const K = headRowsFor(picked.length);
  if (2 * K > positions) return null;
  const rows = new BigInt64Array(K); // the rows past the count: position 0, read by nothing
  const inverse = new BigInt64Array(positions).fill(BigInt(K));
  picked.forEach((p, j) => {
    rows[j] = BigInt(p);
    inverse[p] = BigInt(j);
  });
  return { rows, inverse };
}
