/**
 * Op functions with shape inference: each checks its arguments, computes the output dtype and
 * shape, and appends one ONNX node (opset 21 semantics). Model code, losses and gradient rules all
 * build graphs through these, so a shape error surfaces where it is made, with the values' names.
 */
import { type DType, GraphError, type Shape, type Value, isFloat, sizeOf } from './graph.ts';

function fail(op: string, msg: string, ...vs: Value[]): never {
  throw new GraphError(`${op}: ${msg} (${vs.map(String).join(', ')})`);
}

export function normAxis(axis: number, rank: number): number {
  return axis < 0 ? axis + rank : axis;
}

/** numpy broadcasting of shapes; `vs` only name the operands in the error. */
export function broadcast(op: string, shapes: readonly Shape[], ...vs: Value[]): number[] {
  const rank = Math.max(...shapes.map((s) => s.length));
  const out: number[] = [];
  for (let i = 0; i < rank; i++) {
    let d = 1;
    for (const s of shapes) {
      const k = s[s.length - rank + i] ?? 1;
      if (k !== 1 && d !== 1 && k !== d) fail(op, 'shapes do not broadcast', ...vs);
      if (k !== 1) d = k;
    }
    out.push(d);
  }
  return out;
}

export const broadcastShapes = (op: string, ...vs: Value[]): number[] =>
  broadcast(
    op,
    vs.map((v) => v.shape),
    ...vs,
  );

const one = (x: Value, op: string, dtype: DType = x.dtype, shape: Shape = x.shape): Value =>
  x.graph.node(op, [x], {}, [{ dtype, shape }])[0];

function binary(op: string, a: Value, b: Value, dtype?: DType): Value {
  if (a.dtype !== b.dtype) fail(op, 'dtypes differ', a, b);
  return a.graph.node(op, [a, b], {}, [{ dtype: dtype ?? a.dtype, shape: broadcastShapes(op, a, b) }])[0];
}

/** Lets scalars be written as numbers: they become constants of the other operand's dtype. */
type Operand = Value | number;
const lift = (x: Operand, like: Value): Value => (typeof x === 'number' ? like.graph.scalar(x, like.dtype) : x);
const pair = (op: string, a: Operand, b: Operand, dtype?: DType): Value => {
  if (typeof a === 'number' && typeof b === 'number') throw new GraphError(`${op}: two numbers`);
  const like = typeof a === 'number' ? (b as Value) : a;
  return binary(op, lift(a, like), lift(b, like), dtype);
};

export const add = (a: Operand, b: Operand): Value => pair('Add', a, b);
export const sub = (a: Operand, b: Operand): Value => pair('Sub', a, b);
export const mul = (a: Operand, b: Operand): Value => pair('Mul', a, b);
export const div = (a: Operand, b: Operand): Value => pair('Div', a, b);
export const pow = (a: Operand, b: Operand): Value => pair('Pow', a, b);
export const max = (a: Operand, b: Operand): Value => pair('Max', a, b);
export const min = (a: Operand, b: Operand): Value => pair('Min', a, b);
export const equal = (a: Operand, b: Operand): Value => pair('Equal', a, b, 'bool');
export const less = (a: Operand, b: Operand): Value => pair('Less', a, b, 'bool');
export const greater = (a: Operand, b: Operand): Value => pair('Greater', a, b, 'bool');
export const greaterOrEqual = (a: Operand, b: Operand): Value => pair('GreaterOrEqual', a, b, 'bool');
export const and = (a: Value, b: Value): Value => binary('And', a, b);
export const or = (a: Value, b: Value): Value => binary('Or', a, b);
export const not = (x: Value): Value => one(x, 'Not');

export const neg = (x: Value): Value => one(x, 'Neg');
export const exp = (x: Value): Value => one(x, 'Exp');
export const log = (x: Value): Value => one(x, 'Log');
export const sqrt = (x: Value): Value => one(x, 'Sqrt');
export const reciprocal = (x: Value): Value => one(x, 'Reciprocal');
export const abs = (x: Value): Value => one(x, 'Abs');
export const sigmoid = (x: Value): Value => one(x, 'Sigmoid');
export const tanh = (x: Value): Value => one(x, 'Tanh');
export const isNaN = (x: Value): Value => one(x, 'IsNaN', 'bool');
export const isInf = (x: Value): Value => one(x, 'IsInf', 'bool');
export const identity = (x: Value): Value => one(x, 'Identity');
/** Identity in ONNX; the autodiff does not propagate through it. */
export const stopGradient = (x: Value): Value => one(x, 'StopGradient');

const ONNX_DTYPE: Record<DType, number> = { float32: 1, float64: 11, int64: 7, int32: 6, uint8: 2, bool: 9 };
export function cast(x: Value, dtype: DType): Value {
  if (x.dtype === dtype) return x;
  return x.graph.node('Cast', [x], { to: ONNX_DTYPE[dtype] }, [{ dtype, shape: x.shape }])[0];
}
export { ONNX_DTYPE };

export function where(cond: Value, a: Operand, b: Operand): Value {
  if (cond.dtype !== 'bool') fail('Where', 'condition must be bool', cond);
  // Two numbers become constants of the graph's float dtype.
  const like = typeof a !== 'number' ? a : typeof b !== 'number' ? b : cond.graph.scalar(0);
  const [x, y] = [lift(a, like), lift(b, like)];
  if (x.dtype !== y.dtype) fail('Where', 'dtypes differ', x, y);
  return cond.graph.node('Where', [cond, x, y], {}, [
    { dtype: x.dtype, shape: broadcastShapes('Where', cond, x, y) },
  ])[0];
}

function reduce(op: string, x: Value, axes: readonly number[], keepdims: boolean): Value {
  const ax = axes.map((a) => normAxis(a, x.rank));
  const shape = x.shape.flatMap((d, i) => (ax.includes(i) ? (keepdims ? [1] : []) : [d]));
  const attrs = { keepdims: keepdims ? 1 : 0 };
  return x.graph.node(op, [x, x.graph.ints(ax)], attrs, [{ dtype: x.dtype, shape }])[0];
}
export const reduceSum = (x: Value, axes: readonly number[], keepdims = true): Value =>
  reduce('ReduceSum', x, axes, keepdims);
export const reduceMax = (x: Value, axes: readonly number[], keepdims = true): Value =>
  reduce('ReduceMax', x, axes, keepdims);
export const reduceMean = (x: Value, axes: readonly number[], keepdims = true): Value =>
  reduce('ReduceMean', x, axes, keepdims);
/** log Σ exp over `axes`; onnxruntime's kernel subtracts the maximum first (stable at any magnitude). */
export const reduceLogSumExp = (x: Value, axes: readonly number[], keepdims = true): Value =>
  reduce('ReduceLogSumExp', x, axes, keepdims);

export function argMax(x: Value, axis: number, keepdims = false): Value {
  const ax = normAxis(axis, x.rank);
  const shape = x.shape.flatMap((d, i) => (i === ax ? (keepdims ? [1] : []) : [d]));
  return x.graph.node('ArgMax', [x], { axis: ax, keepdims: keepdims ? 1 : 0 }, [{ dtype: 'int64', shape }])[0];
}

/** Reshape with at most one -1; 0 is not special (allowzero semantics are never needed here). */
export function reshape(x: Value, shape: readonly number[]): Value {
  const known = shape.filter((d) => d !== -1).reduce((a, b) => a * b, 1);
  const out = shape.map((d) => (d === -1 ? x.size / known : d));
  if (sizeOf(out) !== x.size || out.some((d) => !Number.isInteger(d)))
    fail('Reshape', `cannot reshape to [${shape}]`, x);
  if (out.length === x.rank && out.every((d, i) => d === x.shape[i])) return x;
  return x.graph.node('Reshape', [x, x.graph.ints(out)], {}, [{ dtype: x.dtype, shape: out }])[0];
}

export function transpose(x: Value, perm: readonly number[]): Value {
  if (perm.length !== x.rank || [...perm].sort().some((p, i) => p !== i)) fail('Transpose', `bad perm [${perm}]`, x);
  if (perm.every((p, i) => p === i)) return x;
  return x.graph.node('Transpose', [x], { perm }, [{ dtype: x.dtype, shape: perm.map((p) => x.shape[p]) }])[0];
}

/** Swaps the last two axes (a batch of matrices transposed). */
export const transposeLast = (x: Value): Value =>
  transpose(
    x,
    [...x.shape.keys()].map((i) => (i < x.rank - 2 ? i : 2 * x.rank - 3 - i)),
  );

export function expand(x: Value, shape: readonly number[]): Value {
  const out = broadcast('Expand', [x.shape, shape], x);
  if (out.length === x.rank && out.every((d, i) => d === x.shape[i])) return x;
  return x.graph.node('Expand', [x, x.graph.ints(shape)], {}, [{ dtype: x.dtype, shape: out }])[0];
}

export function slice(x: Value, axis: number, start: number, end: number): Value {
  const ax = normAxis(axis, x.rank);
  if (start < 0 || end > x.shape[ax] || start >= end) fail('Slice', `bad range ${start}:${end} on axis ${ax}`, x);
  const shape = x.shape.map((d, i) => (i === ax ? end - start : d));
  const g = x.graph;
  return g.node('Slice', [x, g.ints([start]), g.ints([end]), g.ints([ax])], {}, [{ dtype: x.dtype, shape }])[0];
}

export function concat(xs: readonly Value[], axis: number): Value {
  const ax = normAxis(axis, xs[0].rank);
  const shape = xs[0].shape.map((d, i) => (i === ax ? xs.reduce((s, x) => s + x.shape[ax], 0) : d));
  const fits = (x: Value) => x.rank === shape.length && x.shape.every((d, i) => i === ax || d === shape[i]);
  if (!xs.every(fits)) fail('Concat', 'shapes differ', ...xs);
  return xs[0].graph.node('Concat', xs, { axis: ax }, [{ dtype: xs[0].dtype, shape }])[0];
}

export function split(x: Value, sizes: readonly number[], axis: number): Value[] {
  const ax = normAxis(axis, x.rank);
  if (sizes.reduce((a, b) => a + b, 0) !== x.shape[ax]) fail('Split', `sizes [${sizes}] do not cover axis ${ax}`, x);
  const outs = sizes.map((n) => ({ dtype: x.dtype, shape: x.shape.map((d, i) => (i === ax ? n : d)) }));
  return x.graph.node('Split', [x, x.graph.ints(sizes)], { axis: ax }, outs);
}

/** numpy take: output shape = data[:axis] + indices + data[axis+1:]. */
export function gather(data: Value, indices: Value, axis = 0): Value {
  const ax = normAxis(axis, data.rank);
  const shape = [...data.shape.slice(0, ax), ...indices.shape, ...data.shape.slice(ax + 1)];
  return data.graph.node('Gather', [data, indices], { axis: ax }, [{ dtype: data.dtype, shape }])[0];
}

export function gatherElements(data: Value, indices: Value, axis: number): Value {
  if (indices.rank !== data.rank) fail('GatherElements', 'ranks differ', data, indices);
  const ax = normAxis(axis, data.rank);
  return data.graph.node('GatherElements', [data, indices], { axis: ax }, [
    { dtype: data.dtype, shape: indices.shape },
  ])[0];
}

/** data with updates added at indices along axis (repeated indices accumulate). */
export function scatterElementsAdd(data: Value, indices: Value, updates: Value, axis: number): Value {
  return scatterElements(data, indices, updates, axis, 'add');
}

/** A copy of data with updates written (or with 'add' added) at indices along axis; no gradient rule for 'none'. */
export function scatterElements(
  data: Value,
  indices: Value,
  updates: Value,
  axis: number,
  reduction: 'none' | 'add' = 'none',
): Value {
  if (indices.rank !== data.rank || updates.shape.some((d, i) => d !== indices.shape[i])) {
    fail('ScatterElements', 'indices and updates must have one shape, of the rank of data', data, indices, updates);
  }
  const attrs = { axis: normAxis(axis, data.rank), reduction };
  return data.graph.node('ScatterElements', [data, indices, updates], attrs, [
    { dtype: data.dtype, shape: data.shape },
  ])[0];
}

/** Constant-zero padding; pads = [begin_0 .. begin_n, end_0 .. end_n] as in ONNX. */
export function pad(x: Value, pads: readonly number[]): Value {
  const shape = x.shape.map((d, i) => d + pads[i] + pads[i + x.rank]);
  return x.graph.node('Pad', [x, x.graph.ints(pads)], { mode: 'constant' }, [{ dtype: x.dtype, shape }])[0];
}

/** numpy matmul (batched, broadcasting batch dims). */
export function matmul(a: Value, b: Value): Value {
  if (a.rank < 2 || b.rank < 2) fail('MatMul', 'operands must have rank >= 2', a, b);
  if (a.shape[a.rank - 1] !== b.shape[b.rank - 2]) fail('MatMul', 'inner dimensions differ', a, b);
  const batch = broadcast('MatMul', [a.shape.slice(0, -2), b.shape.slice(0, -2)], a, b);
  const shape = [...batch, a.shape[a.rank - 2], b.shape[b.rank - 1]];
  return a.graph.node('MatMul', [a, b], {}, [{ dtype: a.dtype, shape }])[0];
}

/** 2-D matrix product op(a) · op(b) with optional transposes (no bias): avoids materialised transposes. */
export function gemm(a: Value, b: Value, transA = 0, transB = 0): Value {
  if (a.rank !== 2 || b.rank !== 2) fail('Gemm', 'operands must be 2-D', a, b);
  const [m, k] = transA ? [a.shape[1], a.shape[0]] : a.shape;
  const [k2, n] = transB ? [b.shape[1], b.shape[0]] : b.shape;
  if (k !== k2) fail('Gemm', 'inner dimensions differ', a, b);
  return a.graph.node('Gemm', [a, b], { transA, transB }, [{ dtype: a.dtype, shape: [m, n] }])[0];
}

/** Block-quantized weights of a product x·Wᵀ, W [N, K]: com.microsoft MatMulNBits' B and scales inputs. */
export interface QuantizedWeight {
  /** [N, ⌈K / blockSize⌉, blockSize · bits / 8] codes, uint8. */
  readonly codes: Value;
  /** [N · ⌈K / blockSize⌉] per-block scales. */
  readonly scales: Value;
  readonly bits: number;
  readonly blockSize: number;
}

/**
 * x [M, K] · dequant(W)ᵀ → [M, N] with onnxruntime's com.microsoft MatMulNBits (no zero points: the code's
 * midpoint 2^(bits−1) is zero). `accuracyLevel` 4 lets onnxruntime quantize x to int8 per block and use its integer
 * kernels; onnxruntime only runs it fast when the weights are initializers (engine/README.md).
 */
export function matMulNBits(x: Value, w: QuantizedWeight, accuracyLevel: number): Value {
  const [M, K] = x.shape;
  const [N, blocks, blob] = w.codes.shape;
  if (x.rank !== 2 || w.codes.rank !== 3)
    fail('MatMulNBits', 'x must be [M, K] and codes [N, blocks, blob]', x, w.codes);
  if (blocks !== Math.ceil(K / w.blockSize) || blob !== (w.blockSize * w.bits) / 8)
    fail('MatMulNBits', `codes do not hold ${K} inputs in blocks of ${w.blockSize}`, x, w.codes);
  const attrs = { K, N, bits: w.bits, block_size: w.blockSize, accuracy_level: accuracyLevel };
  return x.graph.node(
    'MatMulNBits',
    [x, w.codes, w.scales],
    attrs,
    [{ dtype: x.dtype, shape: [M, N] }],
    'com.microsoft',
  )[0];
}

/**
 * ONNX RotaryEmbedding (opset 23), HF rotate_half convention: x [B, h, T, E] rotated by position_ids
 * [B, T] through cos/sin tables [P, E/2]. The tables enter linearly, so scaled tables scale the result.
 * onnxruntime implements it for float32 (not float64).
 */
export function rotaryEmbedding(x: Value, cos: Value, sin: Value, positions: Value): Value {
  if (x.rank !== 4 || cos.rank !== 2 || cos.shape[1] * 2 !== x.shape[3])
    fail('RotaryEmbedding', 'expects x [B, h, T, E] and tables [P, E/2]', x, cos);
  return x.graph.node('RotaryEmbedding', [x, cos, sin, positions], { interleaved: 0 }, [x])[0];
}

/** Softmax over the last axis (one fused kernel; gradient rule in autodiff/rules.ts). */
export const softmax = (x: Value): Value => x.graph.node('Softmax', [x], { axis: -1 }, [x])[0];

/** x / sqrt(mean(x², last axis) + eps) · scale (ONNX RMSNormalization, opset 23). */
export function rmsNormalization(x: Value, scale: Value, eps: number): Value {
  if (scale.rank !== 1 || scale.shape[0] !== x.shape[x.rank - 1]) {
    fail('RMSNormalization', 'scale must match the last axis', x, scale);
  }
  return x.graph.node('RMSNormalization', [x, scale], { axis: -1, epsilon: { float: eps } }, [x])[0];
}

export function checkFloat(op: string, ...vs: Value[]): void {
  for (const v of vs) if (!isFloat(v.dtype)) fail(op, 'expects a float tensor', v);
}
