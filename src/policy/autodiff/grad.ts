/**
 * Reverse-mode autodiff driver (tinygrad's `compute_gradient`): walks the nodes between the
 * parameters and the loss in reverse topological order, applies the op's rule, un-broadcasts,
 * accumulates gradients of values used several times, and stops at StopGradient. The backward
 * pass is emitted into the same graph, so forward and backward run as one onnxruntime session.
 */
import { GraphError, type Node, type Value, isFloat } from '../graph/graph.ts';
import { add, expand, gemm, reduceSum, reshape, scatterElementsAdd } from '../graph/ops.ts';
import { GRAD_RULES, type PrimitiveOp } from './rules.ts';

/** Sums a broadcast gradient back down to `shape` (numpy broadcasting in reverse). */
export function unbroadcast(g: Value, shape: readonly number[]): Value {
  if (g.rank === shape.length && g.shape.every((d, i) => d === shape[i])) return g;
  const lead = g.rank - shape.length;
  const axes = [...g.shape.keys()].filter((i) => i < lead || (shape[i - lead] === 1 && g.shape[i] !== 1));
  if (axes.length === 0) return reshape(g, shape);
  const rows = leadingRows(g, axes);
  return reshape(rows ? columnSums(g, rows) : reduceSum(g, axes, false), shape);
}

/** The product of the reduced axes when they are exactly the leading ones (a bias-gradient sum), else 0. */
function leadingRows(g: Value, axes: readonly number[]): number {
  if (!axes.every((a, i) => a === i) || axes.length === g.rank) return 0;
  return g.shape.slice(0, axes.length).reduce((a, b) => a * b, 1);
}

/**
 * Σ over rows as ones[1, R] · g[R, C]: inside train_step onnxruntime's ReduceSum over the leading
 * axis of [2048, 256] took 0.26 ms, this one-row Gemm 0.09-0.15 ms (bias and norm-weight gradients).
 */
function columnSums(g: Value, rows: number): Value {
  const ones = g.graph.constant(new Array<number>(rows).fill(1), g.dtype, [1, rows]);
  return gemm(ones, reshape(g, [rows, g.size / rows]));
}

/**
 * A scatter-add into zeros (an embedding's gradient: autodiff/rules.ts embeddingGrad): [zeros,
 * indices, updates], else null.
 */
function scatterIntoZeros(g: Value): readonly Value[] | null {
  const n = g.node;
  if (!n || n.op !== 'ScatterElements' || n.attrs.reduction !== 'add') return null;
  const data = n.inputs[0]!.node;
  const zero = data?.op === 'Expand' ? data.inputs[0] && g.graph.valueOf(data.inputs[0]) : undefined;
  return zero?.length === 1 && zero[0] === 0 ? (n.inputs as Value[]) : null;
}

/**
 * prev + g, except that a scatter-add into zeros (a tied embedding's gradient beside the LM head's) is
 * scattered into the other term instead: no [V, D] zeros (which onnxruntime folds into a permanent
 * initializer: 545 MB at Qwen2.5-0.5B) and no [V, D] sum.
 */
function accumulate(prev: Value, g: Value): Value {
  const [sg, sp] = [scatterIntoZeros(g), scatterIntoZeros(prev)];
  if (sg) return scatterElementsAdd(prev, sg[1], sg[2], Number(g.node!.attrs.axis));
  if (sp) return scatterElementsAdd(g, sp[1], sp[2], Number(prev.node!.attrs.axis));
  return add(prev, g);
}

function ruleOf(n: Node): (typeof GRAD_RULES)[PrimitiveOp] {
  const rule = (GRAD_RULES as Partial<Record<string, (typeof GRAD_RULES)[PrimitiveOp]>>)[n.op];
  if (!rule) throw new GraphError(`no gradient rule for ${n.op} (node ${n.name})`);
  return rule;
}

/** Nodes whose outputs depend on `wrt` through differentiable edges, in creation (topological) order. */
function forwardSet(wrt: readonly Value[], nodes: readonly Node[]): Set<Value> {
  const needs = new Set<Value>(wrt);
  for (const n of nodes) {
    if (n.op === 'StopGradient' || !n.inputs.some((v) => v && needs.has(v))) continue;
    for (const v of n.outputs) if (isFloat(v.dtype)) needs.add(v);
  }
  return needs;
}

/** Ancestors of `loss`, found iteratively and returned in reverse topological order. */
function reverseOrder(loss: Value): Node[] {
  const seen = new Set<Node>();
  const stack = loss.node ? [loss.node] : [];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (seen.has(n)) continue;
    seen.add(n);
    for (const v of n.inputs) if (v?.node && !seen.has(v.node)) stack.push(v.node);
  }
  return [...seen].sort((a, b) => b.id - a.id); // ids are creation order, which is topological
}

/**
 * d(loss)/d(wrt) for each value in wrt, as new values of the same graph. `seed` is the gradient
 * of loss itself (default 1; loss must then be a scalar). Unreached parameters get zeros.
 */
export function grad(loss: Value, wrt: readonly Value[], seed?: Value): Value[] {
  const graph = loss.graph;
  if (!seed && loss.size !== 1) throw new GraphError(`grad: loss ${loss} is not a scalar; pass a seed gradient`);
  const order = reverseOrder(loss);
  const needs = forwardSet(wrt, [...order].reverse());
  const grads = new Map<Value, Value>([[loss, seed ?? expand(graph.scalar(1, loss.dtype), loss.shape)]]);
  for (const n of order) {
    const custom = graph.customGradient(n);
    const inputs = custom ? custom.inputs : n.inputs;
    if (!n.outputs.some((v) => grads.has(v)) || !inputs.some((v) => v && needs.has(v))) continue;
    if (n.op === 'StopGradient') continue;
    const gs = n.outputs.map((v) => grads.get(v) ?? expand(graph.scalar(0, v.dtype), v.shape));
    const ins = custom ? custom.rule(gs[0]) : ruleOf(n)(gs, n);
    if (ins.length !== inputs.length) {
      throw new GraphError(`${n.op} rule returned ${ins.length} gradients for ${inputs.length} inputs`);
    }
    inputs.forEach((v, i) => {
      const gi = ins[i];
      if (!v || !needs.has(v)) return;
      // A rule that gives no gradient for a float input the parameters reach would silently drop a path.
      if (!gi)
        throw new GraphError(
          `${n.op} (node ${n.name}) has no gradient for its input ${i} (${v}), which depends on the parameters`,
        );
      const g = unbroadcast(gi, v.shape);
      const prev = grads.get(v);
      grads.set(v, prev ? accumulate(prev, g) : g);
    });
  }
  return wrt.map((w) => grads.get(w) ?? expand(graph.scalar(0, w.dtype), w.shape));
}
