/**
 * Generation graphs: a prefill over left-padded prompts that fills a key/value cache, and a
 * decode step that appends one token per row. The cache is one [B, K, S, E] tensor per layer for
 * keys and one for values (S = cache slots). The decode step only reads the cache: each row's query
 * attends the slots written so far and its own new key in one softmax, and the step outputs just the
 * new keys and values [B, K, 1, E], which the caller writes into the slot (left padding aligns the
 * prompts' ends, so every row writes the same slot). Returning a whole updated cache instead made every
 * step copy all of it: 2·L·B·K·S·E floats, the step's largest memory traffic at long contexts.
 */
import { type FloatDType, Graph, type Value } from '../graph/graph.ts';
import * as o from '../graph/ops.ts';
import type { Layout } from '../model/layout.ts';
import { type Model, forward, lmLogits, weightInputs } from '../model/transformer.ts';
import { causalAllowed, slotAllowed } from './common.ts';

export interface PrefillShape {
  readonly batch: number;
  readonly promptLen: number;
  readonly cacheLen: number;
}

export interface DecodeShape {
  readonly batch: number;
  readonly cacheLen: number;
}

export const cacheName = (kind: 'k' | 'v', layer: number): string => `cache_${kind}_${layer}`;
/** The decode step's own keys or values of a layer, [B, K, 1, E]. */
export const stepName = (kind: 'k' | 'v', layer: number): string => `step_${kind}_${layer}`;

/** Outputs of both graphs besides the caches: logits, and the greedy token with its log-prob. */
function heads(g: Graph, model: Model, last: Value): void {
  const logits = lmLogits(model, last); // [B, V]
  const max = o.reduceMax(logits, [1]); // [B, 1]
  const lse = o.add(max, o.log(o.reduceSum(o.exp(o.sub(logits, max)), [1]))); // [B, 1]
  g.output('logits', logits);
  g.output('greedy_token', o.argMax(logits, 1)); // [B] int64
  g.output('greedy_logprob', o.reshape(o.sub(max, lse), [last.shape[0]])); // [B]
}

export function buildPrefillGraph(layout: Layout, s: PrefillShape, float: FloatDType = 'float32'): Graph {
  const g = new Graph(float);
  const { batch: B, promptLen: T, cacheLen: S } = s;
  const model = weightInputs(g, layout);
  const tokens = g.input('tokens', 'int64', [B, T]);
  const positions = g.input('positions', 'int64', [B, T]);
  const mask = g.input('attention_mask', g.float, [B, T]);
  const caches: [number, Value, Value][] = [];
  const kv = (layer: number, k: Value, v: Value) => {
    const padTo = (x: Value) => (S === T ? o.identity(x) : o.pad(x, [0, 0, 0, 0, 0, 0, S - T, 0])); // [B, K, S, E]
    caches.push([layer, padTo(k), padTo(v)]);
    return { k, v };
  };
  const hidden = forward(model, { tokens, positions, allowed: causalAllowed(mask), kv, maxPosition: S });
  const last = o.reshape(o.slice(o.reshape(hidden, [B, T, -1]), 1, T - 1, T), [B, -1]); // [B, D]: prompts end at T-1
  heads(g, model, last);
  for (const [layer, k, v] of caches) {
    g.output(cacheName('k', layer), k);
    g.output(cacheName('v', layer), v);
  }
  return g;
}

export function buildDecodeGraph(layout: Layout, s: DecodeShape, float: FloatDType = 'float32'): Graph {
  const g = new Graph(float);
  const { batch: B, cacheLen: S } = s;
  const { numKvHeads: K, headDim: E, numLayers: L } = layout.config;
  const model = weightInputs(g, layout);
  const tokens = g.input('tokens', 'int64', [B, 1]);
  const positions = g.input('positions', 'int64', [B, 1]);
  const valid = g.input('slot_mask', g.float, [B, S]); // slots holding earlier tokens (not this step's)
  const past = [...Array(L).keys()].map((i) => ({
    k: g.input(cacheName('k', i), g.float, [B, K, S, E]), v: g.input(cacheName('v', i), g.float, [B, K, S, E]),
  }));
  const kv = (layer: number, k: Value, v: Value) => {
    g.output(stepName('k', layer), k); // [B, K, 1, E]: the caller writes them into this step's slot
    g.output(stepName('v', layer), v);
    return { past: past[layer] };
  };
  const hidden = forward(model, { tokens, positions, allowed: slotAllowed(valid), kv, maxPosition: S }); // [B, D]
  heads(g, model, hidden);
  return g;
}
