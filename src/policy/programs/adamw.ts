/**
 * In-graph optimizer: global gradient-norm clipping (torch.nn.utils.clip_grad_norm_) and AdamW
 * (torch.optim.AdamW: bias-corrected moments, decoupled weight decay applied before the step).
 * A non-finite gradient norm sets `skipped`; the outputs are then meaningless and the runner keeps
 * its parameters and moments (as torch's GradScaler skips optimizer.step), so one bad batch cannot
 * poison the weights. Gating every output in-graph instead cost a full pass (Where) per step.
 */
import { Graph, type Value } from '../graph/graph.ts';
import * as o from '../graph/ops.ts';
import { GROUPS, type GroupName } from '../model/layout.ts';

export interface AdamWSpec {
  readonly beta1: number;
  readonly beta2: number;
  readonly eps: number;
  /** Decoupled weight decay, applied to the `matrices` group only (norms and biases never decay). */
  readonly weightDecay: number;
  /** Global L2 gradient-norm limit; null disables clipping. */
  readonly maxGradNorm: number | null;
}

/** docs/spec.md §4 defaults: β = (0.9, 0.999), weight decay 0.01, clip 1.0; eps is torch's default. */
export const DEFAULT_ADAMW: AdamWSpec = { beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01, maxGradNorm: 1 };

/** One value per group that holds parameters (an actor's LoRA adapters have no `vectors`: that key is then absent). */
export type Groups = Record<GroupName, Value>;

export interface OptimizerState {
  readonly params: Groups;
  readonly m: Groups;
  readonly v: Groups;
}

export interface UpdateResult extends OptimizerState {
  readonly gradNorm: Value; // scalar, before clipping
  readonly skipped: Value; // scalar 1 when the update must not be applied (non-finite gradient), else 0
}

/** The clip factor min(maxGradNorm / (‖g‖ + 1e-6), 1) (torch's clip_grad_norm_), or 1 without clipping. */
function clipCoefficient(gradNorm: Value, spec: AdamWSpec): Value {
  return spec.maxGradNorm === null
    ? gradNorm.graph.scalar(1, gradNorm.dtype)
    : o.min(o.div(spec.maxGradNorm, o.add(gradNorm, 1e-6)), 1);
}

/**
 * The step's scalar factors, folded so that each full pass over a group does the least work: clipping
 * rides on the moments' gradient factors; the step size divides the denominator's factors,
 * p − m / (√v · a/s + eps/s) (a = 1/√(1 − β2^t), s = lr / (1 − β1^t)).
 */
function stepFactors(lr: Value, step: Value, coef: Value, spec: AdamWSpec) {
  const scalar = (x: number) => lr.graph.scalar(x, lr.dtype);
  const c1 = o.mul(scalar(1 - spec.beta1), coef); // (1 − β1) · clip
  const c2 = o.mul(scalar(1 - spec.beta2), o.mul(coef, coef)); // (1 − β2) · clip²
  const stepSize = o.div(lr, o.sub(1, o.pow(scalar(spec.beta1), step))); // lr / (1 − β1^t)
  const a = o.reciprocal(o.sqrt(o.sub(1, o.pow(scalar(spec.beta2), step)))); // 1 / √(1 − β2^t)
  // lr = 0 (a warm-up's first step) must leave p unchanged: factor 0 and an infinite eps give m / ∞ = 0.
  const moving = o.greater(stepSize, 0);
  const aOverS = o.where(moving, o.div(a, stepSize), 0);
  const epsOverS = o.where(moving, o.div(spec.eps, stepSize), Number.POSITIVE_INFINITY);
  return { c1, c2, aOverS, epsOverS };
}

/** One group's update: new moments from g (and g², shared with the norm) and the decayed, stepped parameters. */
function updateGroup(
  x: { p: Value; m: Value; v: Value; g: Value; squares: Value },
  f: ReturnType<typeof stepFactors>,
  decay: Value | null,
  spec: AdamWSpec,
): { p: Value; m: Value; v: Value } {
  const m = o.add(o.mul(x.m, spec.beta1), o.mul(x.g, f.c1));
  const v = o.add(o.mul(x.v, spec.beta2), o.mul(x.squares, f.c2));
  const p = decay ? o.mul(x.p, decay) : x.p;
  return { p: o.sub(p, o.div(m, o.add(o.mul(o.sqrt(v), f.aOverS), f.epsOverS))), m, v };
}

/**
 * One AdamW step on every group; `lr` and `step` (1-based) are scalar graph inputs. Every pass over
 * the packed groups costs about 1 ms at 3M parameters (memory-bound), so the scalar factors are
 * folded (stepFactors) and g² is shared by the norm and v.
 */
export function adamw(state: OptimizerState, grads: Groups, lr: Value, step: Value, spec: AdamWSpec): UpdateResult {
  const groups = GROUPS.filter((g) => g in grads); // an actor's LoRA adapters have no `vectors` group
  const squares = Object.fromEntries(groups.map((g) => [g, o.mul(grads[g], grads[g])])) as Groups;
  const gradNorm = o.sqrt(groups.map((g) => o.reduceSum(squares[g], [0], false)).reduce((a, b) => o.add(a, b)));
  const finite = o.not(o.or(o.isNaN(gradNorm), o.isInf(gradNorm)));
  const f = stepFactors(lr, step, clipCoefficient(gradNorm, spec), spec);
  const out = { params: {} as Groups, m: {} as Groups, v: {} as Groups };
  for (const name of groups) {
    const decay = name === 'matrices' && spec.weightDecay > 0 ? o.sub(1, o.mul(lr, spec.weightDecay)) : null;
    const next = updateGroup(
      { p: state.params[name], m: state.m[name], v: state.v[name], g: grads[name], squares: squares[name] },
      f,
      decay,
      spec,
    );
    out.params[name] = next.p;
    out.m[name] = next.m;
    out.v[name] = next.v;
  }
  return { ...out, gradNorm, skipped: o.cast(o.not(finite), lr.dtype) };
}

/**
 * AdamW on one chunk of a group, for the in-place optimizer (engine/train.ts): inputs p, m, v, g [size]
 * and the scalars lr, step, grad_norm (of the whole gradient, found beforehand) and decay_rate (the
 * weight decay of this chunk's group: 0 for `vectors`, whose factor 1 − lr·0 is then exactly 1);
 * outputs new_p, new_m, new_v. The runner binds each output to its input's memory: every input is read
 * only by nodes the output depends on, so it is consumed before it is overwritten. The per-element
 * arithmetic is the one-graph step's (same folded factors).
 */
export function buildAdamwChunkGraph(size: number, spec: AdamWSpec): Graph {
  const g = new Graph('float32');
  const [p, m, v, grad] = ['p', 'm', 'v', 'g'].map((n) => g.input(n, 'float32', [size]));
  const [lr, step, gradNorm, decayRate] = ['lr', 'step', 'grad_norm', 'decay_rate'].map((n) =>
    g.input(n, 'float32', []),
  );
  const f = stepFactors(lr, step, clipCoefficient(gradNorm, spec), spec);
  const next = updateGroup({ p, m, v, g: grad, squares: o.mul(grad, grad) }, f, o.sub(1, o.mul(lr, decayRate)), spec);
  g.output('new_p', next.p);
  g.output('new_m', next.m);
  g.output('new_v', next.v);
  return g;
}

/**
 * Σ g² of each row of one chunk [rows, width] of the gradient, for the in-place optimizer's norm: the
 * runner adds the row sums in float64. onnxruntime sums a whole [n] vector in float32 with errors that
 * grow with n (measured: 2.6e-4 relative on the norm of 43M gradients in 4M-float chunks, 5e-4 in one
 * ReduceSum per group, against float64); sums of 1024 floats stay within a few ulps.
 */
export function buildSumSquaresGraph(rows: number, width: number): Graph {
  const g = new Graph('float32');
  const x = g.input('g', 'float32', [rows, width]);
  g.output('sum_squares', o.reduceSum(o.mul(x, x), [1], false));
  return g;
}
