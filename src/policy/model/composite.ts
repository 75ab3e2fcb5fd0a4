/**
 * Composite ops built from autodiff primitives: their gradients come from the primitives' rules.
 * SiLU and log-softmax are always used from here; softmax and RMSNorm also have fused kernels
 * (see transformer.ts `kernels`), and these definitions are their reference.
 */
import type { Value } from '../graph/graph.ts';
import * as o from '../graph/ops.ts';

export function silu(x: Value): Value {
  return o.mul(x, o.sigmoid(x));
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
