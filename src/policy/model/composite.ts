/**
 * Composite ops built from autodiff primitives: their gradients come from the primitives' rules,
 * or, for `siluFusedGrad` and `matmulTransB`, from a backward written out (Graph.defineGradient)
 * that does less work. Log-softmax is always used from here; softmax, RMSNorm and the rotary
 * embedding also have onnxruntime kernels (chosen by the program options, graph/program-options.ts),
 * and these definitions are their reference.
 */
import type { Value } from '../graph/graph.ts';
import * as o from '../graph/ops.ts';

export function silu(x: Value): Value {
  return o.mul(x, o.sigmoid(x));
}

/**
 * SiLU with its backward written out: d/dx x·σ(x) = σ + y·(1 − σ) = σ + y − y·σ (four passes over
 * the activation; the primitives' chain rule takes six, and the MLP's activations are the widest).
 */
export function siluFusedGrad(x: Value): Value {
  const s = o.sigmoid(x);
  const y = o.mul(x, s);
  return x.graph.defineGradient(y, [x], (g) => [o.mul(g, o.add(s, o.sub(y, o.mul(y, s))))]);
}

/**
 * A scalar 1 that depends on `g` (0·g[0] + 1), to make a backward recompute (a) wait for the upstream
 * gradient, so onnxruntime does not run it inside the forward, and (b) differ from the forward's nodes,
 * so its common-subexpression elimination does not merge the two (either would keep the forward's
 * tensor alive after all). x · one is x exactly.
 */
export function oneAfter(g: Value): Value {
  return o.add(o.mul(o.slice(o.reshape(g, [-1]), 0, 0, 1), 0), 1); // [1]
}

/**
 * SwiGLU's product silu(x)·u with its backward written out, keeping x and u for it (not σ(x) and
 * silu(x), which the chain rule keeps besides u): the backward recomputes σ and silu from x, one
 * [N, I] tensor fewer per layer across the backward for three more passes over it in the backward.
 * dx = g·u·(σ + y − y·σ) with y = x·σ, du = g·y.
 */
export function swiglu(x: Value, u: Value): Value {
  // onnxruntime fuses x·σ(x) into one com.microsoft QuickGelu kernel (one pass), which has no float64
  // version: float64 graphs (the gradient checks) spell silu as x / (1 + e^−x), which it leaves alone.
  const silu = x.dtype === 'float64' ? o.div(x, o.add(o.exp(o.neg(x)), 1)) : o.mul(x, o.sigmoid(x));
  const h = o.mul(silu, u);
  return x.graph.defineGradient(h, [x, u], (g) => {
    const xr = o.mul(x, oneAfter(g));
    const s = o.sigmoid(xr);
    const y = o.mul(xr, s);
    return [o.mul(o.mul(g, u), o.add(s, o.sub(y, o.mul(y, s)))), o.mul(g, y)];
  });
}

/**
 * Attention weights p = softmax(q·kᵀ + bias) and the weighted values p·v, with a backward that
 * recomputes p from q and k (kept for their own gradients anyway) instead of keeping it: one
 * [B, K, G·T, S] tensor per layer fewer across the backward (59 MB per layer at Qwen2.5-0.5B's 14 heads
 * and 1024 tokens) for one more q·kᵀ, bias add and softmax per layer in the backward. The recompute's
 * q is q · oneAfter(g), so p is bit for bit the forward's. `scores` adds the bias and applies softmax
 * to q·kᵀ [B, K, G·T, S]; dS = p·(dp − Σ dp·p), dq = dS·k, dk = dSᵀ·q, dv = pᵀ·g.
 */
export function attendRecomputed(q: Value, k: Value, v: Value, probs: (scores: Value) => Value): Value {
  const weights = (qq: Value) => probs(o.matmul(qq, o.transposeLast(k)));
  const y = o.matmul(weights(q), v); // [B, K, G·T, E]
  return q.graph.defineGradient(y, [q, k, v], (g) => {
    const p = weights(o.mul(q, oneAfter(g)));
    const dp = o.matmul(g, o.transposeLast(v));
    const ds = o.mul(p, o.sub(dp, o.reduceSum(o.mul(dp, p), [-1])));
    return [o.matmul(ds, k), o.matmul(o.transposeLast(ds), q), o.matmul(o.transposeLast(p), g)];
  });
}

/**
 * HF rotate_half rotary embedding: x·cos + cat(−x2, x1)·sin over the halves of the last axis. The
 * reference for the ONNX RotaryEmbedding op, and what float64 graphs (gradient checks) use.
 */
export function rope(x: Value, cos: Value, sin: Value): Value {
  const E = x.shape[x.rank - 1];
  const [x1, x2] = o.split(x, [E / 2, E / 2], -1);
  return o.add(o.mul(x, cos), o.mul(o.concat([o.neg(x2), x1], -1), sin));
}

/**
 * a · bᵀ over the last two axes (attention scores q·kᵀ). Differentiated through the Transpose, the
 * gradient of b would come out transposed and be transposed back (a copy per layer); written out
 * it is gᵀ·a, which onnxruntime runs as one MatMul with a transposed operand.
 */
export function matmulTransB(a: Value, b: Value): Value {
  const y = o.matmul(a, o.transposeLast(b));
  return a.graph.defineGradient(y, [a, b], (g) => [o.matmul(g, b), o.matmul(o.transposeLast(g), a)]);
}

/** HF Qwen2RMSNorm: x · rsqrt(mean(x², last axis) + eps) · w. */
export function rmsNorm(x: Value, w: Value, eps: number): Value {
  const ms = o.reduceMean(o.mul(x, x), [-1]); // [N, 1]
  return o.mul(o.mul(x, o.reciprocal(o.sqrt(o.add(ms, eps)))), w); // [N, D]
}

/** Numerically stable softmax over the last axis (the max is a constant for the gradient). */
export function softmax(x: Value): Value {
  const e = o.exp(o.sub(x, o.stopGradient(o.reduceMax(x, [-1]))));
  return o.div(e, o.reduceSum(e, [-1]));
}

export function logSoftmax(x: Value): Value {
  const z = o.sub(x, o.stopGradient(o.reduceMax(x, [-1])));
  return o.sub(z, o.log(o.reduceSum(o.exp(z), [-1])));
}

/**
 * The LM head and the per-row statistics the losses read, as one composite with its backward written
 * out: for h [N, D] and the head weight w [V, D], x = h·wᵀ [N, V], returns [N, 2] = (log p(target), entropy)
 * per row, targets [N, 1]. The chain rule through log-softmax, exp and the entropy's product kept five
 * [N, V] tensors across the backward and made a dozen more; here, with p = softmax(x) (one fused kernel)
 * and lse = max(x) − log max(p) (the largest p is 1/Σe^(x − max): never underflows; two reductions
 * instead of a log-sum-exp pass), log p(t) = x_t − lse and H = lse − Σ p·x (a batched dot product, no
 * [N, V] temporary). For upstream (gl, gH):
 *   d/dx log p(t) = onehot(t) − p,   d/dx H = −p·(x − lse + H),
 *   dx = p·(−gH·x + gH·(lse − H) − gl) + onehot(t)·gl.
 * onnxruntime runs Add/Mul/Exp out of place (measured: an elementwise chain over [N, V] holds two
 * buffers), so passes are what cost memory. Without the entropy's gradient (`entropyGrad` false: SFT,
 * or PPO with entropyCoef 0, where it is a metric or multiplied by 0), the backward keeps only p and
 * is dx = p·(−gl) + onehot·gl: two [N, V] buffers at any time (x and p in the forward, p and dx in the
 * backward). With it, x and p both cross to the backward and its three passes hold one more.
 * dx is then two Gemms (dh = dx·w, dw = dxᵀ·h).
 *
 * Over `maxLogits` (rows · vocabulary) the rows go in chunks of at most that many logits, and each chunk's
 * backward recomputes its x and p from h (kept anyway) and w: one more Gemm per chunk for a program that never holds
 * more than a chunk's [rows, V] tensors (the issue at a 150k vocabulary: one 512-token row's logits are 311 MB, and
 * the loss holds several). The recompute's h is h · oneAfter(g), so it runs in the backward and x is bit for bit the
 * forward's; dw sums the chunks' dxᵀ·h in a chain, so two [V, D] terms at most are alive.
 */
export function headStats(h: Value, w: Value, targets: Value, entropyGrad: boolean, maxLogits = Infinity): Value {
  const [N, V] = [h.shape[0], w.shape[0]];
  if (N * V <= maxLogits) return headChunk(h, w, targets, entropyGrad, false);
  const rows = Math.max(1, Math.floor(maxLogits / V));
  const sizes = Array.from({ length: Math.ceil(N / rows) }, (_, i) => Math.min(rows, N - i * rows));
  const [hs, ts] = [o.split(h, sizes, 0), o.split(targets, sizes, 0)];
  return o.concat(
    hs.map((hc, i) => headChunk(hc, w, ts[i], entropyGrad, true)),
    0,
  );
}

/** headStats over one chunk of rows; `recompute`: the backward forms x and p again from h and w, not kept. */
function headChunk(h: Value, w: Value, targets: Value, entropyGrad: boolean, recompute: boolean): Value {
  const [N, V] = [h.shape[0], w.shape[0]];
  const logits = (hh: Value) => o.gemm(hh, w, 0, 1); // [N, V]
  const x = logits(h);
  const p = o.softmax(x);
  const lse = o.sub(o.reduceMax(x, [1]), o.log(o.reduceMax(p, [1]))); // [N, 1]
  const dot = o.reshape(o.matmul(o.reshape(p, [N, 1, V]), o.reshape(x, [N, V, 1])), [N, 1]); // Σ p·x
  const entropy = o.sub(lse, dot);
  const logp = o.sub(o.gatherElements(x, targets, 1), lse); // [N, 1]
  const out = o.concat([logp, entropy], 1);
  return h.graph.defineGradient(out, [h, w], (g) => {
    const xb = recompute ? logits(o.mul(h, oneAfter(g))) : x;
    const pb = recompute ? o.softmax(xb) : p;
    const [gl, gH] = o.split(g, [1, 1], 1); // [N, 1] each
    const perRow = entropyGrad ? o.sub(o.mul(gH, o.sub(lse, entropy)), gl) : o.neg(gl); // gH·(lse − H) − gl
    const coefficient = entropyGrad ? o.add(o.mul(xb, o.neg(gH)), perRow) : perRow;
    const dx = o.scatterElementsAdd(o.mul(pb, coefficient), targets, gl, 1); // [N, V]
    return [o.gemm(dx, w), o.gemm(dx, h, 1, 0)];
  });
}
