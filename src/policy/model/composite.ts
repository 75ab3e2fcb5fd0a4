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
