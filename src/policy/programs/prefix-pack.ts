/**
 * Rows that share a prompt, packed so the prompt is computed once (PolicyOptions.packPrefixes). A group's rollouts
 * start from the same prompt (GRPO's and StarPO's groups), and in an RL batch the prompt is most of every row: on
 * Bandit with RAGEN's prompt ~230 tokens against ~22 answered. Scoring and training each row whole repeats the
 * prompt's forward and backward once per row.
 *
 * A packed row is one shared prefix followed by each member's own tokens (its segment). Every token of a segment
 * attends the prefix and the tokens before it in its own segment (the `segments` input: 0 for the prefix, i for
 * segment i), at its own position ids, so each token sees exactly the context it has in its row: the same
 * log-probs, values and gradients up to float rounding (the sums run over other shapes). The prefix ends before any
 * member's first trained token and one token before the rows part, so every log-prob of a trained token, and the
 * first token after the prefix, is computed by a position whose context is one row's.
 *
 * The packed batch is an ordinary TrainBatch in the caller's alignment (index j describes the token at j), plus:
 * `described[j]`, the token position j − 1 predicts (0 at a segment's first index after the first: that position
 * ends the previous segment and predicts nothing), explicit `positions` and `segments`. Per-token arrays are copied
 * from the row whose token index j describes. `toPacked` maps every original (row, token) to the packed index that
 * computes it (−1: token 0 of a row, or padding), which is how outputs come back.
 */
import type { SequenceBatch } from './batch.ts';

export interface PackedFields {
  readonly described: Int32Array;
  readonly positions: Int32Array;
  readonly segments: Int32Array;
}

export type Packed<B extends SequenceBatch> = B & PackedFields;

export const isPacked = (b: SequenceBatch): b is Packed<SequenceBatch> => 'segments' in b && 'described' in b;

/** A shared prefix shorter than this is not worth a packed row. */
export const MIN_SHARED_PREFIX = 16;

interface Group {
  readonly rows: number[];
  /** Tokens of the shared prefix (0: the row alone, unpacked). */
  readonly shared: number;
}

/** Real length of each row, or null when a row is not a run of real tokens from index 0 (left padding). */
function rowLengths(b: SequenceBatch): number[] | null {
  const lengths: number[] = [];
  for (let r = 0; r < b.batch; r++) {
    let n = 0;
    while (n < b.seqLen && b.attentionMask[r * b.seqLen + n] > 0.5) n++;
    for (let t = n; t < b.seqLen; t++) if (b.attentionMask[r * b.seqLen + t] > 0.5) return null;
    lengths.push(n);
  }
  return lengths;
}

/**
 * Rows grouped by their first MIN_SHARED_PREFIX tokens; a group's prefix is its members' common prefix, cut one
 * token short of its end and before every member's first trained token (`lossMask`), and of the shortest member.
 */
function groupRows(b: SequenceBatch & { lossMask?: Float32Array }, lengths: number[]): Group[] {
  const T = b.seqLen;
  const byHead = new Map<string, number[]>();
  for (let r = 0; r < b.batch; r++) {
    const key =
      lengths[r] > MIN_SHARED_PREFIX ? b.tokens.subarray(r * T, r * T + MIN_SHARED_PREFIX).join(',') : `#${r}`;
    byHead.set(key, [...(byHead.get(key) ?? []), r]);
  }
  return [...byHead.values()].map((rows) => {
    if (rows.length < 2) return { rows, shared: 0 };
    const first = rows[0];
    let common = Math.min(...rows.map((r) => lengths[r]));
    for (const r of rows.slice(1)) {
      let n = 0;
      while (n < common && b.tokens[r * T + n] === b.tokens[first * T + n]) n++;
      common = n;
    }
    let shared = common - 1; // token `shared` itself must be common: one slot describes it for every member
    if (b.lossMask)
      for (const r of rows) {
        let t = 1;
        while (t < shared + 1 && !(b.lossMask[r * T + t] > 0)) t++;
        shared = Math.min(shared, t - 1); // lossMask is 0 at every index ≤ shared
      }
    return shared >= MIN_SHARED_PREFIX ? { rows, shared } : { rows, shared: 0 };
  });
}

/**
 * The batch with every group of ≥ 2 rows sharing a prefix of ≥ MIN_SHARED_PREFIX tokens packed into one row (other
 * rows stay rows of their own), or null when no group shares one (or rows are left-padded): nothing to gain.
 */
export function packSharedPrefixes<B extends SequenceBatch>(
  b: B,
  seqMultiple = 1,
): { batch: Packed<B>; toPacked: Int32Array } | null {
  const lengths = rowLengths(b);
  if (!lengths) return null;
  const groups = groupRows(b as B & { lossMask?: Float32Array }, lengths);
  if (!groups.some((g) => g.shared > 0)) return null;
  const T = b.seqLen;
  const packedLength = (g: Group) => g.shared + g.rows.reduce((n, r) => n + lengths[r] - g.shared, 0);
  const P = Math.ceil(Math.max(...groups.map(packedLength)) / seqMultiple) * seqMultiple;
  const n = groups.length * P;
  const [tokens, described, positions, segments] = [0, 1, 2, 3].map(() => new Int32Array(n));
  const attentionMask = new Float32Array(n);
  const fromOrig = new Int32Array(n).fill(-1);
  const toPacked = new Int32Array(b.batch * T).fill(-1);
  groups.forEach((g, p) => {
    const base = p * P;
    const lead = g.rows[0];
    for (let k = 0; k < g.shared; k++) {
      [tokens[base + k], positions[base + k], attentionMask[base + k]] = [b.tokens[lead * T + k], k, 1];
      if (k > 0) [described[base + k], fromOrig[base + k]] = [b.tokens[lead * T + k], lead * T + k];
    }
    let j = base + g.shared;
    g.rows.forEach((r, i) => {
      for (let t = 1; t <= g.shared; t++) toPacked[r * T + t] = t === g.shared ? base + g.shared : base + t;
      for (let t = g.shared; t < lengths[r]; t++, j++) {
        [tokens[j], positions[j], segments[j], attentionMask[j]] = [b.tokens[r * T + t], t, i + 1, 1];
        // A segment's first index follows the previous segment's end, which predicts nothing; the first segment's
        // follows the prefix's end, which predicts token `shared` for every member.
        if (t > g.shared || (i === 0 && t > 0)) {
          [described[j], fromOrig[j]] = [b.tokens[r * T + t], r * T + t];
          if (t > g.shared) toPacked[r * T + t] = j;
        }
      }
    });
  });
  const fields = Object.entries(b).map(([k, v]) => {
    if (k === 'tokens' || k === 'attentionMask' || !(v instanceof Float32Array)) return [k, v];
    const out = new Float32Array(n);
    for (let j = 0; j < n; j++) if (fromOrig[j] >= 0) out[j] = v[fromOrig[j]];
    return [k, out];
  });
  const batch = {
    ...Object.fromEntries(fields),
    batch: groups.length,
    seqLen: P,
    tokens,
    attentionMask,
    described,
    positions,
    segments,
  } as unknown as Packed<B>;
  return { batch, toPacked };
}

/** Outputs of the packed batch (caller alignment) back to the original rows: index i takes packed[toPacked[i]]. */
export function unpack(packed: Float32Array, toPacked: Int32Array): Float32Array {
  return Float32Array.from(toPacked, (j) => (j >= 0 ? packed[j] : 0));
}
