/**
 * Generation graphs over a position-aligned key/value cache: one [B, K, S, E] tensor per layer for keys
 * and one for values, where a row's token at position p lives in slot p (no left padding). Two programs:
 *
 * - extend: the next tokens of every row (a whole prompt, or only what was appended since the row's
 *   cached prefix) attend the cache's earlier slots and each other. Their keys and values are scattered
 *   into a copy of the cache at their positions before attention, so every query attends one row of S
 *   slots in position order, the real keys a prefix of it. A token's keys and values are therefore the
 *   same numbers whichever call computed them and whatever else the call held: reductions over slots see
 *   the same values in the same places, followed only by masked slots, which add exact zeros
 *   (see engine/README.md: a cache kept across turns gives the tokens of a full re-prefill bit for bit).
 *   Outputs: the head on each row's last new token, and the new tokens' keys and values [B, K, N, E],
 *   which the caller writes into its cache at their slots.
 * - decode: one token per row. It only reads its cache, in two parts: the prompt, one per group of rows
 *   that share it (a GRPO group's rollouts: read once for the group, not once per row), and the row's
 *   tokens generated since, each part's real slots first; the query attends both and its own new key in
 *   one softmax, and the step outputs just the new keys and values [B, K, 1, E], which the caller writes
 *   into the row's next slot. Returning a whole updated cache instead made every step copy all of it.
 */
import { type FloatDType, Graph, type Value } from '../graph/graph.ts';
import * as o from '../graph/ops.ts';
import type { ProgramOptions } from '../graph/program-options.ts';
import type { Layout, ParamView } from '../model/layout.ts';
import { BLOCKED, type Model, forward, lmLogits, weightInputs } from '../model/transformer.ts';
import { slotAllowed } from './common.ts';

export interface ExtendShape {
  readonly batch: number;
  /** New tokens per row (N), padded. */
  readonly newLen: number;
  readonly cacheLen: number;
}

/**
 * A decode step over `groups` × `perGroup` rows (consecutive rows of a group share one prompt), prompts of up to
 * `prefixLen` slots and `cacheLen` slots of tokens generated since; both lengths are multiples of 32.
 */
export interface DecodeShape {
  readonly groups: number;
  readonly perGroup: number;
  readonly prefixLen: number;
  readonly cacheLen: number;
}

export const decodeBatch = (s: DecodeShape): number => s.groups * s.perGroup;

export const cacheName = (kind: 'k' | 'v', layer: number): string => `cache_${kind}_${layer}`;
/** A decode step's prompt keys or values of a layer, one per group, [Gp, K, P, E]. */
export const prefixName = (kind: 'k' | 'v', layer: number): string => `prefix_${kind}_${layer}`;
/** The decode step's own keys or values of a layer, [B, K, 1, E]. */
export const stepName = (kind: 'k' | 'v', layer: number): string => `step_${kind}_${layer}`;

/**
 * Outputs of both graphs besides the caches: logits; the greedy token with its log-prob and the entropy (at T = 1);
 * and `sample_weights`, exp(logit − max) [B, V], the unnormalised distribution at T = 1 that sampling draws from
 * (computed here on both threads instead of an exp per logit in JavaScript; engine/README.md).
 */
function heads(g: Graph, model: Model, last: Value): void {
  const B = last.shape[0];
  const logits = lmLogits(model, last); // [B, V]
  const max = o.reduceMax(logits, [1]); // [B, 1]
  const weights = o.exp(o.sub(logits, max)); // [B, V]
  const lse = o.add(max, o.log(o.reduceSum(weights, [1]))); // [B, 1]
  g.output('logits', logits);
  g.output('sample_weights', weights);
  g.output('greedy_token', o.argMax(logits, 1)); // [B] int64
  g.output('greedy_logprob', o.reshape(o.sub(max, lse), [B])); // [B]
  const meanLogit = o.reduceSum(o.mul(o.exp(o.sub(logits, lse)), logits), [1]); // Σ p·x, [B, 1]
  g.output('greedy_entropy', o.reshape(o.sub(lse, meanLogit), [B])); // only computed when fetched
}

/** The new tokens' keys or values of a layer from extend, [B, K, N, E]. */
export const newName = (kind: 'k' | 'v', layer: number): string => `new_${kind}_${layer}`;

/**
 * Inputs: tokens and positions [B, N] (a row's new tokens first, then padding whose position the caller
 * sets to a slot no real token of the call uses), `last` [B] (flat index b·N + i of each row's last real
 * new token) and the caches, whose slots below each row's first new position hold its earlier tokens.
 */
export function buildExtendGraph(
  layout: Layout,
  s: ExtendShape,
  float: FloatDType = 'float32',
  options?: ProgramOptions,
): Graph {
  const g = new Graph(float, options);
  const { batch: B, newLen: N, cacheLen: S } = s;
  const { numKvHeads: K, headDim: E, numLayers: L } = layout.config;
  const model = weightInputs(g, layout);
  const tokens = g.input('tokens', 'int64', [B, N]);
  const positions = g.input('positions', 'int64', [B, N]);
  const last = g.input('last', 'int64', [B]);
  const past = [...Array(L).keys()].map((i) => ({
    k: g.input(cacheName('k', i), g.float, [B, K, S, E]),
    v: g.input(cacheName('v', i), g.float, [B, K, S, E]),
  }));
  const slots = o.expand(o.reshape(positions, [B, 1, N, 1]), [B, K, N, E]);
  const kv = (layer: number, k: Value, v: Value) => {
    g.output(newName('k', layer), k);
    g.output(newName('v', layer), v);
    return { k: o.scatterElements(past[layer].k, slots, k, 2), v: o.scatterElements(past[layer].v, slots, v, 2) };
  };
  const slotIndex = g.constant(
    Array.from({ length: S }, (_, i) => i),
    'int64',
    [1, 1, 1, 1, S],
  );
  const allowed = o.greaterOrEqual(o.reshape(positions, [B, 1, 1, N, 1]), slotIndex); // causal by position
  const hidden = forward(model, { tokens, positions, allowed, kv, maxPosition: S }); // [B·N, D]
  heads(g, model, o.gather(hidden, last)); // [B, D]
  return g;
}

/**
 * Inputs: tokens and positions [B, 1], the groups' prompts (prefixName, [Gp, K, P, E], real slots marked by
 * `prefix_mask` [Gp, P]) and each row's generated tokens (cacheName, [B, K, N, E], marked by `slot_mask` [B, N]).
 * `quantized`: views read as int8 blocks (model/quantize.ts), for the rollout engine that bakes them into sessions.
 */
export function buildDecodeGraph(
  layout: Layout,
  s: DecodeShape,
  float: FloatDType = 'float32',
  options?: ProgramOptions,
  quantized: readonly ParamView[] = [],
): Graph {
  const g = new Graph(float, options);
  const { groups: Gp, perGroup: R, prefixLen: P, cacheLen: N } = s;
  const B = decodeBatch(s);
  const { numKvHeads: K, headDim: E, numLayers: L } = layout.config;
  const model = weightInputs(g, layout, quantized);
  const tokens = g.input('tokens', 'int64', [B, 1]);
  const positions = g.input('positions', 'int64', [B, 1]);
  const prefixMask = g.input('prefix_mask', g.float, [Gp, P]);
  const valid = g.input('slot_mask', g.float, [B, N]); // slots holding earlier generated tokens (not this step's)
  const prefixBias = o.where(o.reshape(o.greater(prefixMask, 0.5), [Gp, 1, 1, 1, P]), 0, BLOCKED);
  const cache = (name: (kind: 'k' | 'v', i: number) => string, rows: number, slots: number) =>
    [...Array(L).keys()].map((i) => ({
      k: g.input(name('k', i), g.float, [rows, K, slots, E]),
      v: g.input(name('v', i), g.float, [rows, K, slots, E]),
    }));
  const [prefix, own] = [cache(prefixName, Gp, P), cache(cacheName, B, N)];
  const kv = (layer: number, k: Value, v: Value) => {
    g.output(stepName('k', layer), k); // [B, K, 1, E]: the caller writes them into this step's slot
    g.output(stepName('v', layer), v);
    return { past: { prefix: prefix[layer], own: own[layer], prefixBias, perGroup: R } };
  };
  const hidden = forward(model, { tokens, positions, allowed: slotAllowed(valid), kv, maxPosition: P + N }); // [B, D]
  heads(g, model, hidden);
  return g;
}
