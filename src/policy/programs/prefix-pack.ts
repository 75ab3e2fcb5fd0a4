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
 * member's first trained token (a score call's: its first read one, `headMask`) and one token before the rows part,
 * so every log-prob of a trained token, and the first token after the prefix, is computed by a position whose
 * context is one row's.
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
 * A packed row holds at most this many tokens, or twice the longest row: a packed row's attention is quadratic in
 * its length (every segment's queries meet every key, most of them masked), so rows that share only a system prompt
 * are not all packed into one.
 */
export const PACKED_ROW_TOKENS = 1024;

/**
 * What a query-key pair of attention costs against one token's projections and MLP, per unit of
 * `forwardFlopsPerToken`'s own ratio: a LoRA train step runs 5 attention products per 2 forward ones against 2
 * projection products per forward one, and onnxruntime's attention products ran ~1.5× slower per FLOP than the
 * projections' Gemm (scripts/profile-update.ts, SmolLM2 on FrozenLake: 12.6 s attention against 19 s Gemm over
 * 7 × 960 tokens).
 */
export const ATTENTION_TIME_FACTOR = 2.6;

/** Rows are padded to a multiple of this (the policy's bucket); packed lengths are compared padded. */
const LENGTH_STEP = 32;

export interface PackOptions {
  /**
   * A query-key pair's cost relative to one token's (policy/engine/policy.ts packPairCost); 0 when unknown: then
   * only the cap bounds a packed row.
   */
  readonly pairCost?: number;
}

function commonPrefix(b: SequenceBatch, x: number, y: number, lengths: number[]): number {
  const T = b.seqLen;
  const n = Math.min(lengths[x], lengths[y]);
  let k = 0;
  while (k < n && b.tokens[x * T + k] === b.tokens[y * T + k]) k++;
  return k;
}

/** What the packer needs to know of a batch's rows. */
interface RowFacts {
  readonly lengths: number[];
  /** Of each row, the last index before its first trained (or read) token (a prefix may not reach past it). */
  readonly limit: number[];
  /** The prefix rows x and y may share packed: their common prefix less one token. */
  readonly pairShared: (x: number, y: number) => number;
}

function rowFacts(b: SequenceBatch & { lossMask?: Float32Array }, lengths: number[]): RowFacts {
  const T = b.seqLen;
  // A score call reads the positions of its head mask (the collapse probe: every response after every prompt);
  // without this limit a prefix ran on into the responses, and a group's rows, whose answers share different
  // openings, split into families each repeating the whole prompt (Bandit's probe: 24k tokens computed for 12k).
  const read = b.lossMask ?? b.headMask;
  const limit = lengths.map((n, r) => {
    let t = 1;
    while (t < n && !((read?.[r * T + t] ?? 0) > 0)) t++;
    return t - 1; // the mask is 0 at every index ≤ limit
  });
  return { lengths, limit, pairShared: (x, y) => commonPrefix(b, x, y, lengths) - 1 };
}

/**
 * The prefix a packed row's members share once row `r` joins them (`shared`: theirs so far, unused for a row alone):
 * ending one token short of their common prefix (that token is described once for all of them) and before every
 * member's first trained token. Rows are in token order, so the adjacent pairs decide it.
 */
function joinedShared(f: RowFacts, rows: readonly number[], shared: number, r: number): number {
  const before = rows.length === 1 ? f.limit[rows[0]] : shared;
  return Math.min(before, f.pairShared(rows[rows.length - 1], r), f.limit[r]);
}

/**
 * Rows in token order (so rows with the longest common prefixes are neighbours), cut into families that share a
 * prefix of ≥ MIN_SHARED_PREFIX tokens: a row joins the family before it when that keeps the family's prefix as long
 * (a row that shares less starts its own).
 */
function families(b: SequenceBatch, f: RowFacts): number[][] {
  const T = b.seqLen;
  const { lengths } = f;
  const order = [...lengths.keys()].sort((x, y) => {
    const k = commonPrefix(b, x, y, lengths);
    const [a, c] = [k < lengths[x] ? b.tokens[x * T + k] : -1, k < lengths[y] ? b.tokens[y * T + k] : -1];
    return a - c || x - y;
  });
  const out: { rows: number[]; shared: number }[] = [];
  for (const r of order) {
    const run = out.at(-1);
    if (run) {
      const shared = joinedShared(f, run.rows, run.shared, r);
      if (shared >= MIN_SHARED_PREFIX && (run.rows.length === 1 || shared >= run.shared)) {
        run.rows.push(r);
        run.shared = shared;
        continue;
      }
    }
    out.push({ rows: [r], shared: 0 });
  }
  return out.map((run) => run.rows);
}

const packedLength = (g: Group, lengths: number[]) => g.shared + g.rows.reduce((n, r) => n + lengths[r] - g.shared, 0);

/**
 * Each family cut, in order, into packed rows of at most `cap` tokens (a member longer than that alone), each sharing
 * the longest prefix its own members allow (a later part of a family may share more than its first members do).
 */
function cut(all: readonly number[][], f: RowFacts, cap: number): Group[] {
  const out: Group[] = [];
  for (const members of all) {
    let row: Group = { rows: [members[0]], shared: 0 };
    for (const r of members.slice(1)) {
      const joined = { rows: [...row.rows, r], shared: joinedShared(f, row.rows, row.shared, r) };
      if (packedLength(joined, f.lengths) <= cap) row = joined;
      else {
        out.push(row);
        row = { rows: [r], shared: 0 };
      }
    }
    out.push(row);
  }
  return out;
}

/**
 * The families cut into packed rows of the length that costs least: every row of a call is padded to the longest, so
 * fewer, longer rows repeat the prefix less but pay for more masked attention (rows · (L + pairCost · L²), L the
 * padded length), between the longest single row and the cap (PACKED_ROW_TOKENS, or twice the longest row).
 */
function groupRows(b: SequenceBatch & { lossMask?: Float32Array }, lengths: number[], pairCost: number): Group[] {
  const f = rowFacts(b, lengths);
  const all = families(b, f);
  const longest = Math.max(...lengths);
  const cap = Math.max(PACKED_ROW_TOKENS, 2 * longest);
  if (!(pairCost > 0)) return cut(all, f, cap);
  const padded = (n: number) => Math.ceil(n / LENGTH_STEP) * LENGTH_STEP;
  let best: { groups: Group[]; cost: number } | null = null;
  for (let limit = padded(longest); limit <= cap; limit += LENGTH_STEP) {
    const groups = cut(all, f, limit);
    const L = padded(Math.max(...groups.map((g) => packedLength(g, lengths))));
    const cost = groups.length * (L + pairCost * L * L);
    if (!best || cost < best.cost) best = { groups, cost };
  }
  return best ? best.groups : cut(all, f, cap);
}

/**
 * The batch with every group of ≥ 2 rows sharing a prefix of ≥ MIN_SHARED_PREFIX tokens packed (into one row, or as
 * many as the cost of its length calls for; other rows stay rows of their own), or null when no group shares one
 * (or rows are left-padded): nothing to gain.
 */
export function packSharedPrefixes<B extends SequenceBatch>(
  b: B,
  opts: PackOptions = {},
): { batch: Packed<B>; toPacked: Int32Array } | null {
  const lengths = rowLengths(b);
  if (!lengths) return null;
  const groups = groupRows(b as B & { lossMask?: Float32Array }, lengths, opts.pairCost ?? 0);
  if (!groups.some((g) => g.shared > 0)) return null;
  const T = b.seqLen;
  const P = Math.max(...groups.map((g) => packedLength(g, lengths)));
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
      // Tokens 1 … shared-1 are the prefix's; token `shared` is described at the first segment's start, base + shared.
      for (let t = 1; t <= g.shared; t++) toPacked[r * T + t] = base + t;
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
    if (k === 'headMask') headOfAnyMember(out, v, groups, P, T);
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

/**
 * A packed row's prefix tokens 1 … shared are every member's (toPacked maps each member's there), so the LM head
 * runs on one when any member reads it (SequenceBatch.headMask), not only when the row copied from does.
 */
function headOfAnyMember(packed: Float32Array, mask: Float32Array, groups: readonly Group[], P: number, T: number) {
  groups.forEach((g, p) => {
    for (const r of g.rows)
      for (let k = 1; k <= g.shared; k++) packed[p * P + k] = Math.max(packed[p * P + k], mask[r * T + k]);
  });
}

/** Outputs of the packed batch (caller alignment) back to the original rows: index i takes packed[toPacked[i]]. */
export function unpack(packed: Float32Array, toPacked: Int32Array): Float32Array {
  return Float32Array.from(toPacked, (j) => (j >= 0 ? packed[j] : 0));
}
