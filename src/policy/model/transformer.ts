/**
 * The Qwen2 / Qwen3 / Llama decoder as graph-building functions, leaf to root (nanoGPT's order):
 * RMSNorm → rotary embedding → grouped-query attention → SwiGLU MLP → block → model → heads.
 * Dimensions: B batch, T query tokens, S attended key slots, N = B·T rows, D width, H query
 * heads, K key/value heads, G = H/K queries per K/V head, E head width, I MLP width, V vocab.
 * Activations between blocks are [N, D] so every projection is one 2-D Gemm against an HF
 * [out, in] weight (transB), with no transposed copy of the weights.
 */
import { GraphError, type Graph, type Value } from '../graph/graph.ts';
import * as o from '../graph/ops.ts';
import type { KernelOptions } from '../graph/program-options.ts';
import type { ModelConfig } from '../io/config.ts';
import { inverseFrequencies } from '../io/rope-scaling.ts';
import * as composite from './composite.ts';
import type { Layout, ParamView } from './layout.ts';
import { loraScale } from './lora.ts';
import { QUANT_ACCURACY, QUANT_BITS, QUANT_BLOCK, codesName, scalesName } from './quantize.ts';

/**
 * Additive bias of a blocked key: exp(score - 1e9 - max) is exactly 0 in float32 and float64.
 * Callers allow every query at least one key (itself), so no row is all-blocked; an all-blocked
 * row would be a softmax of rounded (score - 1e9) values, smooth only up to float rounding.
 */
export const BLOCKED = -1e9;

export interface Model {
  readonly cfg: ModelConfig;
  /** Parameter views by key (see layout.ts), already reshaped: the base's and, with LoRA, the adapters'. */
  readonly w: Readonly<Record<string, Value>>;
  /** LoRA's alpha / r; projections with adapter views (`<key>.lora_A`) add the scaled low-rank term. */
  readonly lora?: { readonly scale: number };
  /** Projections (and the LM head) read as int8 blocks instead of `w` (model/quantize.ts), by view key. */
  readonly q?: Readonly<Record<string, o.QuantizedWeight>>;
}

/**
 * Where attention keys come from: given this step's k, v [B, K, T, E], return what to attend [B, K, S, E]
 * (this step's included), or — one query per row (T = 1) — a `past` cache that this step's k, v are attended
 * beside: the cache is then only read, never copied into a new one.
 */
export type KvHook = (layer: number, k: Value, v: Value) => { k: Value; v: Value } | { past: PastKv };

/**
 * A decode step's cache in two parts: the rows' prompts, one per group of `perGroup` consecutive rows that share it
 * ([Gp, K, P, E], B = Gp · perGroup; masked by `prefixBias` [Gp, 1, 1, 1, P]), and each row's tokens generated
 * since ([B, K, N, E], masked by the forward's bias). A shared prompt is read once per group, not once per row.
 */
export interface PastKv {
  readonly prefix: { readonly k: Value; readonly v: Value };
  readonly own: { readonly k: Value; readonly v: Value };
  readonly prefixBias: Value;
  readonly perGroup: number;
}

export interface Inputs {
  readonly tokens: Value; // [B, T] int64
  readonly positions: Value; // [B, T] int64, rotary positions (left padding makes them differ per row)
  readonly allowed: Value; // [B, 1, 1, T, S] bool: which key slots each query may attend (at least one)
  readonly kv?: KvHook;
  /** Positions are < maxPosition (the rotary table's length). */
  readonly maxPosition: number;
}

/**
 * Rotary tables for one projection (queries carry the 1/√E score scale): for the RotaryEmbedding
 * op, cos/sin [P, E/2] and the positions [B, T]; for the composite, cos/sin [B, 1, T, E] at them.
 */
interface Rotary {
  readonly cos: Value;
  readonly sin: Value;
  readonly positions?: Value;
}

interface Ctx {
  readonly B: number;
  readonly T: number;
  readonly q: Rotary;
  readonly k: Rotary;
  readonly bias: Value; // [B, 1, 1, T, S] additive: 0 or BLOCKED
  readonly kv?: KvHook;
  /** Without a cache: the causal query blocks' ends and each block's bias, [B, 1, 1, block, end] (attendCausal). */
  readonly blocks?: { readonly ends: readonly number[]; readonly biases: readonly Value[] };
}

/**
 * One graph input per parameter view (named `w.<key>`), fed with zero-copy subarrays of the packed
 * buffers: splitting the packed vector in-graph would copy every parameter on every call, which
 * dominates decoding a large model one token at a time.
 */
export function weightInputs(g: Graph, layout: Layout, quantized: readonly ParamView[] = []): Model {
  if (quantized.length > 0 && g.float !== 'float32') throw new GraphError('int8 weights need a float32 graph');
  const q = Object.fromEntries(quantized.map((v) => [v.key, int8Inputs(g, v)]));
  const views = [...(layout.frozen?.views ?? []), ...layout.views].filter((v) => !q[v.key] || v.key === 'embed');
  const w = Object.fromEntries(views.map((v) => [v.key, g.input(`w.${v.key}`, g.float, v.shape)]));
  return {
    cfg: layout.config,
    w,
    ...(layout.lora ? { lora: { scale: loraScale(layout.lora) } } : {}),
    ...(quantized.length > 0 ? { q } : {}),
  };
}

/** A view's int8 codes and scales as graph inputs (`q8.<key>.codes`, `q8.<key>.scales`). */
function int8Inputs(g: Graph, v: ParamView): o.QuantizedWeight {
  const [rows, cols] = v.shape;
  const blocks = Math.ceil(cols / QUANT_BLOCK);
  return {
    codes: g.input(codesName(v.key), 'uint8', [rows, blocks, QUANT_BLOCK]),
    scales: g.input(scalesName(v.key), 'float32', [rows * blocks]),
    bits: QUANT_BITS,
    blockSize: QUANT_BLOCK,
  };
}

/** HF's rotary tables for positions 0..P-1: cos/sin of cat(freqs, freqs), computed in float32 like HF. */
export function ropeTables(cfg: ModelConfig, P: number): { cos: Float32Array; sin: Float32Array } {
  const E = cfg.headDim;
  const cos = new Float32Array(P * E);
  const sin = new Float32Array(P * E);
  const inverse = inverseFrequencies(cfg.ropeTheta, E, cfg.ropeScaling);
  for (let i = 0; i < E / 2; i++) {
    const invFreq = inverse[i];
    for (let p = 0; p < P; p++) {
      const a = Math.fround(p * invFreq);
      cos[p * E + i] = cos[p * E + i + E / 2] = Math.cos(a);
      sin[p * E + i] = sin[p * E + i + E / 2] = Math.sin(a);
    }
  }
  return { cos, sin };
}

/** x · Wᵀ (+ b) for an HF [out, in] weight: one Gemm with transB, no transposed copy; plus LoRA's term. */
function linear(m: Model, x: Value, key: string): Value {
  const q = m.q?.[key];
  const y = q ? o.matMulNBits(x, q, QUANT_ACCURACY) : o.gemm(x, m.w[key], 0, 1); // [N, out]
  const biased = m.w[`${key}_bias`] ? o.add(y, m.w[`${key}_bias`]) : y;
  const delta = loraDelta(m, x, key);
  return delta ? o.add(biased, delta) : biased;
}

/**
 * scale · (x·Aᵀ)·Bᵀ [N, out] for the projection view `key`, or null without adapters. For the fused
 * q|k|v view, A is the adapted projections' A matrices stacked ([n·r, D], one view) and B their B
 * matrices placed block-diagonally ([out, n·r], zero rows for a projection without adapter), so the
 * term is two Gemms that land in the right column block of the fused output, with no copy of it.
 */
function loraDelta(m: Model, x: Value, key: string): Value | null {
  const a = m.w[`${key}.lora_A`];
  if (!m.lora || !a) return null;
  const u = o.mul(o.gemm(x, a, 0, 1), m.lora.scale); // [N, n·r]
  const [layer, proj] = key.split('.');
  const b = proj === 'qkv' ? blockDiagonal(m, layer, a) : m.w[`${key}.lora_B`];
  return o.gemm(u, b, 0, 1); // [N, out]
}

/** [(H + 2K)·E, n·r]: each adapted projection's B in its own rows and its own r columns, zeros elsewhere. */
function blockDiagonal(m: Model, layer: string, a: Value): Value {
  const { numHeads: H, numKvHeads: K, headDim: E } = m.cfg;
  const [g, width] = [a.graph, a.shape[0]];
  const zeros = (rows: number, cols: number) => o.expand(g.scalar(0), [rows, cols]);
  let col = 0;
  const blocks = (['q', 'k', 'v'] as const).map((t, j) => {
    const b = m.w[`${layer}.${t}.lora_B`];
    const rows = (j === 0 ? H : K) * E;
    if (!b) return zeros(rows, width);
    const r = b.shape[1];
    const parts = [col > 0 ? zeros(rows, col) : null, b, col + r < width ? zeros(rows, width - col - r) : null];
    col += r;
    const present = parts.filter((p): p is Value => p !== null);
    return present.length === 1 ? b : o.concat(present, 1);
  });
  return o.concat(blocks, 0);
}

/** HF rotate_half convention on x [B, h, T, E]. */
function rope(x: Value, r: Rotary): Value {
  return r.positions ? o.rotaryEmbedding(x, r.cos, r.sin, r.positions) : composite.rope(x, r.cos, r.sin);
}

/**
 * Tables for the queries (scaled by 1/√E: cheaper than scaling q or the scores) and the keys. The
 * ONNX RotaryEmbedding op (one pass each way; measured 0.23 vs 0.40 ms for the composite over
 * [16, 4, 128, 64]) runs in float32 only, so float64 graphs (gradient checks) use the composite.
 */
function rotaryTables(m: Model, positions: Value, maxPosition: number): { q: Rotary; k: Rotary } {
  const { headDim: E } = m.cfg;
  const g = positions.graph;
  const [B, T] = positions.shape;
  const scale = 1 / Math.sqrt(E);
  const tables = ropeTables(m.cfg, maxPosition);
  if (g.options.kernels.rope && g.float === 'float32') {
    // HF tables repeat each frequency over both halves of the head; the op takes one half, [P, E/2].
    const half = (t: Float32Array, k: number) => {
      const values = Array.from(
        { length: maxPosition * (E / 2) },
        (_, i) => k * t[Math.floor(i / (E / 2)) * E + (i % (E / 2))],
      );
      return g.constant(values, 'float32', [maxPosition, E / 2]);
    };
    return {
      q: { cos: half(tables.cos, scale), sin: half(tables.sin, scale), positions },
      k: { cos: half(tables.cos, 1), sin: half(tables.sin, 1), positions },
    };
  }
  const at = (t: Float32Array): Value =>
    o.reshape(o.cast(o.gather(g.constant(t, 'float32', [maxPosition, E]), positions), g.float), [B, 1, T, E]);
  const [cos, sin] = [at(tables.cos), at(tables.sin)];
  return { q: { cos: o.mul(cos, scale), sin: o.mul(sin, scale) }, k: { cos, sin } };
}

/**
 * Softmax and RMSNorm run as fused onnxruntime kernels with their own gradient rules: measured
 * (1 thread, forward + backward) softmax over [16, 4, 128, 128] 4.2 vs 5.2 ms composite, RMSNorm
 * over [2048, 256] 1.0 vs 2.0 ms. Log-softmax stays composite: the fused kernel was slower
 * (391 vs 360 ms over [2048, 32768]). SiLU uses a composite with a written-out backward (4 passes
 * over the activation instead of 6), rotary embedding the ONNX RotaryEmbedding op (float32 graphs).
 * `recompute`: the attention weights and SwiGLU's σ(gate), silu(gate) are recomputed in the backward
 * instead of kept (composite.attendRecomputed, composite.swiglu): measured at Qwen2.5-0.5B, 1x1024, see
 * the engine README's 0.5B section.
 * The graph's options.kernels (graph/program-options.ts) select the plain composites instead (the tests
 * compare both).
 */
const kernels = (x: Value): KernelOptions => x.graph.options.kernels;
const softmax = (x: Value): Value => (kernels(x).softmax ? o.softmax(x) : composite.softmax(x));
const rmsNorm = (x: Value, w: Value, eps: number): Value =>
  kernels(x).rmsNorm ? o.rmsNormalization(x, w, eps) : composite.rmsNorm(x, w, eps);
const silu = (x: Value): Value => (kernels(x).silu ? composite.siluFusedGrad(x) : composite.silu(x));
export const logSoftmax = composite.logSoftmax;

function attention(m: Model, i: number, x: Value, c: Ctx): Value {
  const { numHeads: H, numKvHeads: K, headDim: E } = m.cfg;
  const [B, T, G] = [c.B, c.T, H / K];
  const qkv = o.reshape(linear(m, x, `${i}.qkv`), [B, T, H + 2 * K, E]); // one Gemm: [N, (H + 2K)·E]
  // Heads first, then split in whole [h, T, E] blocks. The reshape to [B, ·] between transpose and split
  // keeps onnxruntime's transpose optimizer from pushing the transpose past the split (into three).
  const heads = o.reshape(o.transpose(qkv, [0, 2, 1, 3]), [B, (H + 2 * K) * T * E]);
  const [q, k, v] = o
    .split(
      heads,
      [H, K, K].map((h) => h * T * E),
      1,
    )
    .map((t, j) => o.reshape(t, [B, [H, K, K][j], T, E]));
  // q heads kv·G + g share K/V head kv (HF repeat_kv)
  const qh = o.reshape(rope(qkNorm(m, i, 'q', q), c.q), [B, K, G * T, E]);
  const kh = rope(qkNorm(m, i, 'k', k), c.k); // [B, K, T, E]
  const kv = c.kv ? c.kv(i, kh, v) : { k: kh, v }; // [B, K, S, E]
  const y =
    'past' in kv
      ? attendPastAndNow(qh, kv.past, kh, v, c)
      : c.kv
        ? attend(qh, kv.k, kv.v, c.bias, K, G)
        : attendCausal(qh, kh, v, c, K, G);
  const merged = o.reshape(o.transpose(o.reshape(y, [B, H, T, E]), [0, 2, 1, 3]), [B * T, H * E]); // [N, H·E]
  return linear(m, merged, `${i}.o`); // [N, D]
}

/** Qwen3's per-head RMSNorm of queries or keys [B, h, T, E] (weights [E]), before the rotary embedding. */
function qkNorm(m: Model, i: number, which: 'q' | 'k', x: Value): Value {
  return m.cfg.qkNorm ? rmsNorm(x, m.w[`${i}.${which}_norm`], m.cfg.rmsNormEps) : x;
}

/** softmax(q·kᵀ + bias)·v over [B, K, S, E] keys and values, bias [B, 1, 1, T, S] → [B, K, G, T, E]. */
function attend(qh: Value, k: Value, v: Value, bias: Value, K: number, G: number): Value {
  const [B, T, S, E] = [bias.shape[0], bias.shape[3], k.shape[2], k.shape[3]];
  if (kernels(qh).recompute) {
    const probs = (scores: Value) =>
      o.reshape(softmax(o.add(o.reshape(scores, [B, K, G, T, S]), bias)), [B, K, G * T, S]);
    return o.reshape(composite.attendRecomputed(qh, k, v, probs), [B, K, G, T, E]);
  }
  const scores = o.reshape(composite.matmulTransB(qh, k), [B, K, G, T, S]);
  const p = o.reshape(softmax(o.add(scores, bias)), [B, K, G * T, S]); // one Add per layer: cheaper than Where
  return o.reshape(o.matmul(p, v), [B, K, G, T, E]);
}

/**
 * A whole sequence's causal attention (training, scoring) in blocks of queries, each against the keys up to its own
 * end (causalBlockEnds): the blocks above the diagonal, every key in them masked, are not computed. At 4 blocks the
 * products and softmax passes cover 5/8 of the [T, T] square. Every query's softmax loses only keys whose weight
 * was exactly 0, so the numbers are the whole square's up to float rounding (its sums run over fewer lanes).
 */
function attendCausal(qh: Value, k: Value, v: Value, c: Ctx, K: number, G: number): Value {
  if (!c.blocks) return attend(qh, k, v, c.bias, K, G);
  const { ends, biases } = c.blocks;
  const E = k.shape[3];
  const q = o.reshape(qh, [c.B, K, G, c.T, E]);
  const blocks = ends.map((end, j) => {
    const start = j === 0 ? 0 : ends[j - 1];
    const qb = o.reshape(o.slice(q, 3, start, end), [c.B, K, G * (end - start), E]);
    return attend(qb, upTo(k, 2, end), upTo(v, 2, end), biases[j], K, G); // [B, K, G, end − start, E]
  });
  return o.concat(blocks, 3);
}

/** x up to `end` on `axis` (x itself when that is all of it). */
const upTo = (x: Value, axis: number, end: number) => (end === x.shape[axis] ? x : o.slice(x, axis, 0, end));

/**
 * The causal query blocks of a sequence's attention without a cache and each block's bias, sliced once for every
 * layer; undefined when the sequence is one block.
 */
function causalBlocks(bias: Value, T: number): Ctx['blocks'] {
  const ends = causalBlockEnds(T, bias.graph.options.causalBlockTokens);
  if (ends.length === 1) return undefined;
  return { ends, biases: ends.map((end, j) => upTo(o.slice(bias, 3, j === 0 ? 0 : ends[j - 1], end), 4, end)) };
}

/** Most query blocks a sequence's causal attention is cut into. */
const MAX_CAUSAL_BLOCKS = 8;

/**
 * Where a causal attention of T queries is cut: blocks of at least `minTokens` (program option causalBlockTokens),
 * at most MAX_CAUSAL_BLOCKS of them, ending on multiples of 16; [T] when T holds fewer than two.
 */
export function causalBlockEnds(T: number, minTokens: number): number[] {
  const n = Math.min(MAX_CAUSAL_BLOCKS, Math.floor(T / minTokens));
  if (!(n >= 2)) return [T];
  return Array.from({ length: n }, (_, j) => (j === n - 1 ? T : Math.floor(((j + 1) * T) / n / 16) * 16));
}

/**
 * One query per row attending its group's prompt, its own earlier tokens and its own key, in one softmax over
 * [P | N | 1] slots: equal to attending a cache with this step written into it, without producing that cache.
 * The scores are laid out by group ([Gp, K, R·G, ·]), so each group's prompt is one product for all its rows' queries.
 * A row's numbers do not depend on its group: every query's products are its own row of a Gemm (M = R·G ≥ 2 with
 * grouped-query heads; one-head-per-kv-head models are never grouped), and P and N are multiples of 32, so each
 * real score keeps its place in the softmax's vector lanes whatever the other rows' prompt lengths (measured: an
 * unaligned shift changes the sums' last bits).
 */
function attendPastAndNow(qh: Value, past: PastKv, kh: Value, vh: Value, c: Ctx): Value {
  const [B, K, G, E] = qh.shape; // T = 1: G·T = G
  const { prefix, own, prefixBias, perGroup: R } = past;
  const [Gp, P, N] = [prefix.k.shape[0], prefix.k.shape[2], own.k.shape[2]];
  if (c.T !== 1) throw new GraphError(`attention beside a past cache takes one query per row, got ${c.T}`);
  if (Gp * R !== B) throw new GraphError(`${Gp} groups of ${R} rows are not the batch's ${B}`);
  // [B, K, G, X] by row ↔ [Gp, K, R, G, X] by group (plain reshapes when every row is its own group)
  const byGroup = (x: Value) => {
    const X = x.shape[3];
    return R === 1 ? o.reshape(x, [Gp, K, 1, G, X]) : o.transpose(o.reshape(x, [Gp, R, K, G, X]), [0, 2, 1, 3, 4]);
  };
  const byRow = (x: Value) => {
    const X = x.shape[4];
    return R === 1 ? o.reshape(x, [B, K, G, X]) : o.reshape(o.transpose(x, [0, 2, 1, 3, 4]), [B, K, G, X]);
  };
  const qg = o.reshape(byGroup(qh), [Gp, K, R * G, E]);
  const prefixScores = o.add(o.reshape(o.matmul(qg, o.transposeLast(prefix.k)), [Gp, K, R, G, P]), prefixBias);
  const ownScores = o.add(byGroup(o.matmul(qh, o.transposeLast(own.k))), o.reshape(c.bias, [Gp, 1, R, 1, N]));
  const self = byGroup(o.reduceSum(o.mul(qh, kh), [3], true)); // q·k of this step's own key, [Gp, K, R, G, 1]
  const p = softmax(o.concat([prefixScores, ownScores, self], 4)); // [Gp, K, R, G, P + N + 1]
  const fromPrefix = o.matmul(o.reshape(o.slice(p, 4, 0, P), [Gp, K, R * G, P]), prefix.v); // [Gp, K, R·G, E]
  const fromOwn = o.matmul(byRow(o.slice(p, 4, P, P + N)), own.v); // [B, K, G, E]
  const fromSelf = o.mul(byRow(o.slice(p, 4, P + N, P + N + 1)), vh); // [B, K, G, E]
  const y = o.add(o.add(byRow(o.reshape(fromPrefix, [Gp, K, R, G, E])), fromOwn), fromSelf);
  return o.reshape(y, [B, K, G, 1, E]);
}

function mlp(m: Model, i: number, x: Value): Value {
  const [gate, up] = [linear(m, x, `${i}.gate`), linear(m, x, `${i}.up`)]; // [N, I] each
  return linear(m, kernels(x).recompute ? composite.swiglu(gate, up) : o.mul(silu(gate), up), `${i}.down`); // [N, D]
}

function block(m: Model, i: number, x: Value, c: Ctx): Value {
  const eps = m.cfg.rmsNormEps;
  const h = o.add(x, attention(m, i, rmsNorm(x, m.w[`${i}.ln1`], eps), c)); // [N, D]
  return o.add(h, mlp(m, i, rmsNorm(h, m.w[`${i}.ln2`], eps))); // [N, D]
}

/** Final hidden states [N, D] (after the last norm) for tokens [B, T]. */
export function forward(m: Model, inp: Inputs): Value {
  const [B, T] = inp.tokens.shape;
  const bias = o.where(inp.allowed, 0, BLOCKED);
  const c: Ctx = {
    B,
    T,
    ...rotaryTables(m, inp.positions, inp.maxPosition),
    bias,
    kv: inp.kv,
    blocks: inp.kv ? undefined : causalBlocks(bias, T),
  };
  let x = o.reshape(o.gather(m.w.embed, inp.tokens), [B * T, m.cfg.hiddenSize]); // [N, D]
  for (let i = 0; i < m.cfg.numLayers; i++) x = block(m, i, x, c);
  return rmsNorm(x, m.w.norm, m.cfg.rmsNormEps);
}

/** The LM head's [V, D] weight: lm_head, or the embedding when tied. */
export const headWeight = (m: Model): Value => m.w.lm_head ?? m.w.embed;

export function lmLogits(m: Model, h: Value): Value {
  const q = m.q?.lm_head ?? m.q?.embed;
  return q ? o.matMulNBits(h, q, QUANT_ACCURACY) : o.gemm(h, headWeight(m), 0, 1); // [N, V]
}

export function values(m: Model, h: Value): Value {
  return o.reshape(o.add(o.gemm(h, m.w.score, 0, 1), m.w.score_bias), [h.shape[0]]); // [N]
}
