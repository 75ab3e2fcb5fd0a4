/**
 * The gradient rules, one per primitive op (tinygrad's `mixin/gradient.py` in TypeScript).
 * A rule takes the upstream gradients (one per node output) and the node, and returns one
 * gradient per node input (null = none). Gradients may have the broadcast shape: the driver
 * un-broadcasts, accumulates and skips inputs that need no gradient (dead rule nodes are pruned
 * when the graph is serialised).
 */
import { GraphError, type Node, type Value } from '../graph/graph.ts';
import {
  add,
  reciprocal,
  reduceMean,
  sqrt,
  cast,
  concat,
  div,
  equal,
  expand,
  gemm,
  greater,
  greaterOrEqual,
  log,
  matmul,
  mul,
  neg,
  pow,
  reduceSum,
  reshape,
  rotaryEmbedding,
  scatterElementsAdd,
  split,
  sub,
  transpose,
  transposeLast,
  where,
  pad,
} from '../graph/ops.ts';

export type GradRule = (gs: readonly Value[], n: Node) => readonly (Value | null)[];

/**
 * Ops the autodiff differentiates. Composites (SiLU, log-softmax, and reference softmax and
 * RMSNorm in model/composite.ts) are built from these; softmax and RMSNorm also exist as fused
 * onnxruntime kernels with their own rules because that is measurably faster (see transformer.ts).
 */
export const PRIMITIVE_OPS = [
  'Identity',
  'Add',
  'Sub',
  'Mul',
  'Div',
  'Pow',
  'Neg',
  'Exp',
  'Log',
  'Sqrt',
  'Reciprocal',
  'Abs',
  'Sigmoid',
  'Tanh',
  'Max',
  'Min',
  'Where',
  'Cast',
  'MatMul',
  'Gemm',
  'ReduceSum',
  'ReduceMean',
  'Reshape',
  'Transpose',
  'Expand',
  'Slice',
  'Concat',
  'Split',
  'Gather',
  'GatherElements',
  'Softmax',
  'RMSNormalization',
  'RotaryEmbedding',
] as const;
export type PrimitiveOp = (typeof PRIMITIVE_OPS)[number];

const x = (n: Node, i = 0): Value => n.inputs[i]!;
const y = (n: Node): Value => n.outputs[0];
const zeros = (like: Value, shape = like.shape): Value => expand(like.graph.scalar(0, like.dtype), shape);
const ints = (n: Node, i: number): number[] => {
  const c = n.inputs[i] && n.inputs[i]!.graph.valueOf(n.inputs[i]!);
  if (!c) throw new GraphError(`${n.name}: input ${i} must be a constant to differentiate ${n.op}`);
  return c;
};

/** MatMul gradients; a 2-D right operand (a weight) takes its gradient as one flat Gemm, not a batched sum. */
function matmulGrads(g: Value, a: Value, b: Value): Value[] {
  if (b.rank !== 2) return [matmul(g, transposeLast(b)), matmul(transposeLast(a), g)];
  const [k, m] = b.shape;
  const g2 = reshape(g, [-1, m]);
  return [reshape(gemm(g2, b, 0, 1), [...g.shape.slice(0, -1), k]), gemm(reshape(a, [-1, k]), g2, 1, 0)];
}

/** Gemm (no bias) gradients: op(A)·op(B), each operand's gradient again one Gemm with flipped flags. */
function gemmGrads(g: Value, n: Node): Value[] {
  const [a, b, ta, tb] = [x(n, 0), x(n, 1), Number(n.attrs.transA ?? 0), Number(n.attrs.transB ?? 0)];
  const da = ta ? gemm(b, g, tb, 1) : gemm(g, b, 0, 1 - tb);
  const db = tb ? gemm(g, a, 1, ta) : gemm(a, g, 1 - ta, 0);
  return [da, db];
}

/**
 * Embedding gradient: rows of g added into a [V, D] zero table at the looked-up indices.
 * ScatterElements(add) is exact with several threads (ScatterND add is not, see docs/design.md).
 * bench-engine measured both for 2048 tokens: equal at a 256 vocabulary (≈1.5 ms), and the
 * scatter 13-33× faster at 32k (34 vs 440 ms; 18 vs 593 under load), so the one-hot Gemm is
 * kept for tiny tables only: up to the graph's options.onehotMaxElements (graph/program-options.ts).
 */
function embeddingGrad(g: Value, idx: Value, table: Value): Value {
  const [v, d] = table.shape;
  const flat = reshape(idx, [-1, 1]); // [N, 1]
  const g2 = reshape(g, [-1, d]); // [N, D]
  if (flat.size * v <= g.graph.options.onehotMaxElements) {
    const vocab = g.graph.constant([...Array(v).keys()], 'int64', [1, v]);
    return gemm(cast(equal(flat, vocab), g.dtype), g2, 1, 0); // [N, V]^T · [N, D]
  }
  return scatterElementsAdd(zeros(table), expand(flat, g2.shape), g2, 0);
}

export const GRAD_RULES = {
  Identity: ([g]) => [g],
  Add: ([g]) => [g, g],
  Sub: ([g]) => [g, neg(g)],
  Mul: ([g], n) => [mul(g, x(n, 1)), mul(g, x(n, 0))],
  Div: ([g], n) => [div(g, x(n, 1)), neg(mul(g, div(y(n), x(n, 1))))],
  Pow: ([g], n) => [mul(g, mul(x(n, 1), pow(x(n, 0), sub(x(n, 1), 1)))), mul(g, mul(y(n), log(x(n, 0))))],
  Neg: ([g]) => [neg(g)],
  Exp: ([g], n) => [mul(g, y(n))],
  Log: ([g], n) => [div(g, x(n))],
  Sqrt: ([g], n) => [div(g, mul(y(n), 2))],
  Reciprocal: ([g], n) => [neg(mul(g, mul(y(n), y(n))))],
  Abs: ([g], n) => [where(greaterOrEqual(x(n), 0), g, neg(g))],
  Sigmoid: ([g], n) => [mul(g, mul(y(n), sub(1, y(n))))],
  Tanh: ([g], n) => [mul(g, sub(1, mul(y(n), y(n))))],
  Max: ([g], n) => [where(greaterOrEqual(x(n, 0), x(n, 1)), g, 0), where(greaterOrEqual(x(n, 0), x(n, 1)), 0, g)],
  Min: ([g], n) => [where(greater(x(n, 0), x(n, 1)), 0, g), where(greater(x(n, 0), x(n, 1)), g, 0)],
  Where: ([g], n) => [null, where(x(n, 0), g, 0), where(x(n, 0), 0, g)],
  Cast: ([g], n) => [cast(g, x(n).dtype)],
  MatMul: ([g], n) => matmulGrads(g, x(n, 0), x(n, 1)),
  Gemm: ([g], n) => gemmGrads(g, n),
  ReduceSum: ([g], n) => [expand(reshape(g, keptShape(n)), x(n).shape), null],
  ReduceMean: ([g], n) => [div(expand(reshape(g, keptShape(n)), x(n).shape), x(n).size / y(n).size), null],
  Reshape: ([g], n) => [reshape(g, x(n).shape), null],
  Transpose: ([g], n) => [transpose(g, inverse(n.attrs.perm as number[]))],
  Expand: ([g]) => [g, null],
  Slice: ([g], n) => [pad(g, slicePads(n)), null, null, null],
  Concat: ([g], n) =>
    split(
      g,
      n.inputs.map((v) => v!.shape[Number(n.attrs.axis)]),
      Number(n.attrs.axis),
    ),
  Split: (gs, n) => [concat(gs, Number(n.attrs.axis)), null],
  Gather: ([g], n) => [embeddingGrad(g, x(n, 1), x(n, 0)), null],
  GatherElements: ([g], n) => [scatterElementsAdd(zeros(x(n)), x(n, 1), g, Number(n.attrs.axis)), null],
  Softmax: ([g], n) => [mul(y(n), sub(g, reduceSum(mul(g, y(n)), [-1])))],
  RMSNormalization: ([g], n) => rmsNormGrads(g, x(n, 0), x(n, 1), (n.attrs.epsilon as { float: number }).float),
  // A rotation's transpose is the rotation by −θ: the same op with the sin table negated. Tables and
  // positions take no gradient (they come from positions, never from parameters).
  RotaryEmbedding: ([g], n) => [rotaryEmbedding(g, x(n, 1), neg(x(n, 2)), x(n, 3)), null, null, null],
} satisfies Record<PrimitiveOp, GradRule>;

/**
 * With r = 1/rms(x) [rows, 1] and x̂ = x·r: dx = r·(g·s − x̂·mean(g·s·x̂)) = (g·s)·r − x·(r³·mean(g·s·x)),
 * ds = Σ_rows g·x̂ = rᵀ·(g·x) (one row-weighted Gemm). Per-row factors are folded so that every full
 * pass over [rows, D] is needed: 10 instead of the 11 of the textbook form.
 */
function rmsNormGrads(g: Value, xv: Value, s: Value, eps: number): Value[] {
  const D = xv.shape[xv.rank - 1];
  const r = reciprocal(sqrt(add(reduceMean(mul(xv, xv), [-1]), eps))); // [.., 1]; ReduceSumSquare measured slower
  const gs = mul(g, s);
  const k = mul(mul(r, mul(r, r)), reduceMean(mul(gs, xv), [-1])); // r³·mean(g·s·x), [.., 1]
  const dx = sub(mul(gs, r), mul(xv, k));
  const rows = r.size;
  const ds = reshape(gemm(reshape(r, [1, rows]), reshape(mul(g, xv), [rows, D])), [D]);
  return [dx, ds];
}

function keptShape(n: Node): number[] {
  const axes = ints(n, 1);
  return x(n).shape.map((d, i) => (axes.includes(i) ? 1 : d));
}

function inverse(perm: readonly number[]): number[] {
  const inv = new Array<number>(perm.length);
  perm.forEach((p, i) => (inv[p] = i));
  return inv;
}

function slicePads(n: Node): number[] {
  const [start, end, axis] = [ints(n, 1)[0], ints(n, 2)[0], ints(n, 3)[0]];
  const r = x(n).rank;
  const pads = new Array<number>(2 * r).fill(0);
  pads[axis] = start;
  pads[axis + r] = x(n).shape[axis] - end;
  return pads;
}
