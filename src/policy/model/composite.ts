/**
 * Composite ops built from autodiff primitives: their gradients come from the primitives' rules,
 * or, for `siluFusedGrad` and `matmulTransB`, from a backward written out (Graph.defineGradient)
 * that does less work. Log-softmax is always used from here; softmax, RMSNorm and the rotary
 * embedding also have onnxruntime kernels (see transformer.ts `kernels`), and these definitions
 * are their reference.
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
 * per row, targets [N, 1]. Only x and the per-row lse and entropy live from the forward to the backward
 * (the chain rule through log-softmax, exp and the entropy's product would keep five [N, V] tensors and
 * make a dozen more). With lp = x − lse and p = exp(lp), for upstream (gl, gH):
 *   d/dx log p(t) = onehot(t) − p,   d/dx H = −p·(lp + H),
 *   dx = p·(−gH·(lp + H) − gl) + onehot(t)·gl.
 * The backward recomputes lp and p from x (lp as x + (−lse), which onnxruntime's common-subexpression
 * elimination cannot merge with the forward's x − lse, so the forward's [N, V] temporaries die in the
 * forward); dx is then two Gemms (dh = dx·w, dw = dxᵀ·h).
 */
export function headStats(h: Value, w: Value, targets: Value): Value {
  const x = o.gemm(h, w, 0, 1); // [N, V]
  const lse = o.reduceLogSumExp(x, [1]); // [N, 1]
  const lp = o.sub(x, lse);
  const entropy = o.neg(o.reduceSum(o.mul(o.exp(lp), lp), [1])); // [N, 1]
  const logp = o.sub(o.gatherElements(x, targets, 1), lse); // [N, 1]
  const out = o.concat([logp, entropy], 1);
  return h.graph.defineGradient(out, [h, w], (g) => {
    const [gl, gH] = o.split(g, [1, 1], 1); // [N, 1] each
    const lp2 = o.add(x, o.neg(lse));
    const p = o.exp(lp2);
    const t = o.mul(o.add(o.mul(o.add(lp2, entropy), o.neg(gH)), o.neg(gl)), p);
    const dx = o.scatterElementsAdd(t, targets, gl, 1); // [N, V]
    return [o.gemm(dx, w), o.gemm(dx, h, 1, 0)];
  });
}
