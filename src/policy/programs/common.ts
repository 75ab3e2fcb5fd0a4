/**
 * Pieces every program graph shares: packed-parameter inputs, the sequence inputs, attention
 * biases, and per-row token statistics (log-prob of a target token, entropy).
 */
import type { Graph, Value } from '../graph/graph.ts';
import * as o from '../graph/ops.ts';
import { type Layout, groupsOf } from '../model/layout.ts';
import { headStats } from '../model/composite.ts';
import { type Model, forward, headWeight } from '../model/transformer.ts';
import type { Groups } from './adamw.ts';

/** `<prefix>_<group>` inputs, one per non-empty group (an actor's LoRA adapters have no `vectors`). */
export function groupInputs(g: Graph, layout: Layout, prefix: string): Groups {
  return Object.fromEntries(
    groupsOf(layout).map((n) => [n, g.input(`${prefix}_${n}`, g.float, [layout.groups[n]])]),
  ) as Groups;
}

export interface SequenceInputs {
  readonly tokens: Value; // [B, T] int64
  readonly positions: Value; // [B, T] int64
  readonly mask: Value; // [B, T] float, 1 for real tokens (left or right padding)
  /** [B, T] int64 in a packed batch (programs/prefix-pack.ts): 0 for the shared prefix, i for segment i. */
  readonly segments?: Value;
  /** The positions the LM head runs on (programs/head-rows.ts); absent: every one. */
  readonly heads?: HeadInputs;
}

/** `head_rows` [K] and `head_inverse` [B·T], int64 (programs/head-rows.ts). */
export interface HeadInputs {
  readonly rows: Value;
  readonly inverse: Value;
}

/**
 * `packed`: rows are packed prefixes and segments (programs/prefix-pack.ts), with a `segments` input; `heads`: the LM
 * head runs on that many positions (programs/head-rows.ts).
 */
export function sequenceInputs(g: Graph, B: number, T: number, packed = false, heads?: number): SequenceInputs {
  return {
    tokens: g.input('tokens', 'int64', [B, T]),
    positions: g.input('positions', 'int64', [B, T]),
    mask: g.input('attention_mask', g.float, [B, T]),
    ...(packed ? { segments: g.input('segments', 'int64', [B, T]) } : {}),
    ...(heads
      ? { heads: { rows: g.input('head_rows', 'int64', [heads]), inverse: g.input('head_inverse', 'int64', [B * T]) } }
      : {}),
  };
}

/**
 * Causal attention over real tokens: [B, 1, 1, T, T] bool (query t sees real keys s <= t); with `segments`, only
 * keys of the shared prefix (segment 0) or of the query's own segment. Every query also sees itself, so padding
 * queries are not all-blocked (see BLOCKED).
 */
export function causalAllowed(mask: Value, segments?: Value): Value {
  const [B, T] = mask.shape;
  const g = mask.graph;
  const tri = (keep: (q: number, k: number) => boolean) =>
    g.constant(
      Array.from({ length: T * T }, (_, i) => (keep(Math.floor(i / T), i % T) ? 1 : 0)),
      'bool',
      [1, 1, 1, T, T],
    );
  let real = o.greater(o.reshape(mask, [B, 1, 1, 1, T]), 0.5);
  if (segments) {
    const key = o.reshape(segments, [B, 1, 1, 1, T]);
    real = o.and(
      real,
      o.or(o.equal(key, o.reshape(segments, [B, 1, 1, T, 1])), o.equal(key, g.constant([0], 'int64', []))),
    );
  }
  return o.or(
    o.and(
      tri((q, k) => k <= q),
      real,
    ),
    tri((q, k) => k === q),
  );
}

/** Attention over cache slots marked valid: [B, 1, 1, 1, S] bool. */
export function slotAllowed(valid: Value): Value {
  const [B, S] = valid.shape;
  return o.greater(o.reshape(valid, [B, 1, 1, 1, S]), 0.5);
}

/** Hidden states [B·T, D] of full sequences (training and scoring). */
export function encode(model: Model, s: SequenceInputs): Value {
  const T = s.tokens.shape[1];
  const allowed = causalAllowed(s.mask, s.segments);
  return forward(model, { tokens: s.tokens, positions: s.positions, allowed, maxPosition: T });
}

/**
 * Per row: log-prob of `targets` [B, T] and entropy of the next-token distribution of logits / T, with
 * 1/T fed as the scalar input `inv_temperature` (log-probs must be those of the distribution tokens were
 * sampled from; verl divides by the rollout temperature too). 1/T scales the hidden states [N, D]
 * rather than the logits [N, V] (at T = 1 the two are the same numbers), and the LM head, log-softmax
 * and entropy are one composite (composite.headStats), in row chunks of at most the program options'
 * headChunkElements logits. `entropyGrad` false drops the entropy's gradient
 * (a loss that reads the entropy only as a metric), which saves one [N, V] tensor across the backward. With
 * `heads`, the head runs on those positions only and every other one gets 0 for both (programs/head-rows.ts).
 */
export function tokenStats(
  model: Model,
  hidden: Value,
  targets: Value,
  entropyGrad = true,
  heads?: HeadInputs,
): { logp: Value; entropy: Value } {
  const [B, T] = targets.shape;
  const g = hidden.graph;
  const flatTargets = o.reshape(targets, [B * T, 1]);
  const [h, t] = heads ? [o.gather(hidden, heads.rows), o.gather(flatTargets, heads.rows)] : [hidden, flatTargets];
  const scaled = o.mul(h, g.input('inv_temperature', hidden.dtype, []));
  const maxLogits = g.options.headChunkElements;
  const picked = headStats(scaled, headWeight(model), t, entropyGrad, maxLogits); // [K, 2]
  // Back to every position: the inverse indexes the K rows and one row of zeros after them.
  const stats = heads
    ? o.gather(o.concat([picked, g.constant([0, 0], hidden.dtype, [1, 2])], 0), heads.inverse)
    : picked; // [N, 2]
  const [logp, entropy] = o.split(stats, [1, 1], 1).map((s) => o.reshape(s, [B, T]));
  return { logp, entropy };
}

/** Stacks scalar metrics into one [M] output (one tensor to fetch instead of M). */
export function metricsVector(metrics: Readonly<Record<string, Value>>): { names: string[]; vector: Value } {
  const names = Object.keys(metrics);
  return {
    names,
    vector: o.concat(
      names.map((n) => o.reshape(metrics[n], [1])),
      0,
    ),
  };
}
