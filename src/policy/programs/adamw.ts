/**
 * In-graph optimizer: global gradient-norm clipping (torch.nn.utils.clip_grad_norm_) and AdamW
 * (torch.optim.AdamW: bias-corrected moments, decoupled weight decay applied before the step).
 * A non-finite gradient norm sets `skipped`; the outputs are then meaningless and the runner keeps
 * its parameters and moments (as torch's GradScaler skips optimizer.step), so one bad batch cannot
 * poison the weights. Gating every output in-graph instead cost a full pass (Where) per step.
 */
import type { Value } from '../graph/graph.ts';
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

/** SPEC §4 defaults: β = (0.9, 0.999), weight decay 0.01, clip 1.0; eps is torch's default. */
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

/**
 * One AdamW step on every group; `lr` and `step` (1-based) are scalar graph inputs. Every pass over
 * the packed groups costs about 1 ms at 3M parameters (memory-bound), so the scalar factors are
 * folded: g² is shared by the norm and v; clipping rides on the moments' gradient factors; the
 * step size divides the denominator's factors, p − m / (√v · a/s + eps/s) (a = 1/√(1 − β2^t)).
 */
export function adamw(state: OptimizerState, grads: Groups, lr: Value, step: Value, spec: AdamWSpec): UpdateResult {
  const groups = GROUPS.filter((g) => g in grads); // an actor's LoRA adapters have no `vectors` group
  const squares = Object.fromEntries(groups.map((g) => [g, o.mul(grads[g], grads[g])])) as Groups;
  const gradNorm = o.sqrt(groups.map((g) => o.reduceSum(squares[g], [0], false)).reduce((a, b) => o.add(a, b)));
  const finite = o.not(o.or(o.isNaN(gradNorm), o.isInf(gradNorm)));
  const scalar = (x: number) => lr.graph.scalar(x, lr.dtype);
  const coef = spec.maxGradNorm === null ? scalar(1) : o.min(o.div(spec.maxGradNorm, o.add(gradNorm, 1e-6)), 1);
  const c1 = o.mul(scalar(1 - spec.beta1), coef); // (1 − β1) · clip
  const c2 = o.mul(scalar(1 - spec.beta2), o.mul(coef, coef)); // (1 − β2) · clip²
  const stepSize = o.div(lr, o.sub(1, o.pow(scalar(spec.beta1), step))); // lr / (1 − β1^t)
  const a = o.reciprocal(o.sqrt(o.sub(1, o.pow(scalar(spec.beta2), step)))); // 1 / √(1 − β2^t)
  // lr = 0 (a warm-up's first step) must leave p unchanged: factor 0 and an infinite eps give m / ∞ = 0.
  const moving = o.greater(stepSize, 0);
  const aOverS = o.where(moving, o.div(a, stepSize), 0);
  const epsOverS = o.where(moving, o.div(spec.eps, stepSize), Number.POSITIVE_INFINITY);
  const out = { params: {} as Groups, m: {} as Groups, v: {} as Groups };
  for (const name of groups) {
    const m = o.add(o.mul(state.m[name], spec.beta1), o.mul(grads[name], c1));
    const v = o.add(o.mul(state.v[name], spec.beta2), o.mul(squares[name], c2));
    const decay = name === 'matrices' && spec.weightDecay > 0 ? o.sub(1, o.mul(lr, spec.weightDecay)) : null;
    const p = decay ? o.mul(state.params[name], decay) : state.params[name];
    out.params[name] = o.sub(p, o.div(m, o.add(o.mul(o.sqrt(v), aOverS), epsOverS)));
    out.m[name] = m;
    out.v[name] = v;
  }
  return { ...out, gradNorm, skipped: o.cast(o.not(finite), lr.dtype) };
}
