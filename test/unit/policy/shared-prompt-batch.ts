/**
 * A small train batch whose rows share a prompt (prefix-pack and head-rows tests): three rows of one 24-token
 * prompt with answers of 6, 9 and 4 tokens, one row of another, right-padded to 34, with every per-token input.
 */
import assert from 'node:assert/strict';
import type { TrainBatch } from '../../../src/policy/programs/batch.ts';

export const PROMPT = Array.from({ length: 24 }, (_, i) => (i * 37 + 5) % 300);
export const ROWS = [
  [...PROMPT, 11, 12, 13, 14, 15, 16],
  [...PROMPT, 21, 22, 23, 24, 25, 26, 27, 28, 29],
  [...PROMPT, 31, 32, 33, 34],
  Array.from({ length: 30 }, (_, i) => (i * 11 + 7) % 300), // sorts after the prompt (5, …)
];
export const T = 34;
/** [rows · T] values of f at each real token of each row, 0 in the padding. */
export const flat = (f: (row: number[], r: number, t: number) => number) =>
  ROWS.flatMap((row, r) => Array.from({ length: T }, (_, t) => (t < row.length ? f(row, r, t) : 0)));
export const batch: TrainBatch = {
  batch: ROWS.length,
  seqLen: T,
  tokens: Int32Array.from(flat((row, _r, t) => row[t])),
  attentionMask: Float32Array.from(flat(() => 1)),
  lossMask: Float32Array.from(flat((_row, r, t) => (r === 3 ? (t >= 20 ? 1 : 0) : t >= 24 ? 1 : 0))),
  advantages: Float32Array.from(flat((_row, r, t) => Math.sin(r + t))),
  oldLogprobs: Float32Array.from(flat((_row, r, t) => -2 - 0.1 * Math.cos(r * t))),
  returns: Float32Array.from(flat((_row, r, t) => Math.cos(r - t))),
  oldValues: Float32Array.from(flat((_row, r, t) => 0.1 * Math.sin(r * t))),
};

/** Each a[i] within `tol` of b[i], relative where |b[i]| > 1. */
export function assertWithin(a: ArrayLike<number>, b: ArrayLike<number>, tol: number, what: string): void {
  assert.equal(a.length, b.length);
  for (let i = 0; i < a.length; i++)
    assert.ok(Math.abs(a[i] - b[i]) <= tol * Math.max(1, Math.abs(b[i])), `${what}[${i}]: ${a[i]} vs ${b[i]}`);
}
