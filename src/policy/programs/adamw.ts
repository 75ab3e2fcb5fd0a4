/**
 * In-graph optimizer: global gradient-norm clipping (torch.nn.utils.clip_grad_norm_) and AdamW
 * (torch.optim.AdamW: bias-corrected moments, decoupled weight decay applied before the step).
 * A non-finite gradient norm keeps parameters and moments unchanged (Where on every output), so
 * one bad batch cannot poison the weights and the caller learns of it from the `skipped` metric.
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

export type Groups = Record<GroupName, Value>;

export interface OptimizerState {
  readonly params: Groups;
  readonly m: Groups;
  readonly v: Groups;
}

export interface UpdateResult extends OptimizerState {
  readonly gradNorm: Value; // scalar, before clipping
  readonly skipped: Value; // scalar 1 when the update was skipped (non-finite gradient), else 0
}

export function globalNorm(grads: readonly Value[]): Value {
  const squares = grads.map((g) => o.reduceSum(o.mul(g, g), [...g.shape.keys()], false));
  return o.sqrt(squares.reduce((a, b) => o.add(a, b)));
}

/**
 * One AdamW step on every group; `lr` and `step` (1-based) are scalar graph inputs. Skipping is
 * done on scalars: with a non-finite norm the moments' decay factors become 1, the gradient and
 * step-size factors 0 and the gradient itself 0 (NaN·0 is NaN), so m, v and params come out
 * unchanged with one full-size Where instead of three.
 */
export function adamw(state: OptimizerState, grads: Groups, lr: Value, step: Value, spec: AdamWSpec): UpdateResult {
  const gradNorm = globalNorm(GROUPS.map((g) => grads[g]));
  const finite = o.not(o.or(o.isNaN(gradNorm), o.isInf(gradNorm)));
  const unless = (x: Value | number, skipped: number): Value => o.where(finite, x, skipped);
  const scalar = (x: number) => lr.graph.scalar(x, lr.dtype);
  const coef = spec.maxGradNorm === null ? scalar(1) : o.min(o.div(spec.maxGradNorm, o.add(gradNorm, 1e-6)), 1);
  const [b1, b2] = [unless(spec.beta1, 1), unless(spec.beta2, 1)];
  const c1 = unless(o.mul(scalar(1 - spec.beta1), coef), 0); // (1 - β1) · clip
  const c2 = unless(o.mul(scalar(1 - spec.beta2), o.mul(coef, coef)), 0); // (1 - β2) · clip²
  const stepSize = unless(o.div(lr, o.sub(1, o.pow(scalar(spec.beta1), step))), 0); // lr / (1 - β1^t)
  const invBc2Sqrt = o.reciprocal(o.sqrt(o.sub(1, o.pow(scalar(spec.beta2), step)))); // 1 / sqrt(1 - β2^t)
  const out = { params: {} as Groups, m: {} as Groups, v: {} as Groups };
  for (const name of GROUPS) {
    const g = o.where(finite, grads[name], 0);
    const m = o.add(o.mul(state.m[name], b1), o.mul(g, c1));
    const v = o.add(o.mul(state.v[name], b2), o.mul(o.mul(g, g), c2));
    const decay = name === 'matrices' && spec.weightDecay > 0 ? unless(o.sub(1, o.mul(lr, spec.weightDecay)), 1) : null;
    const p = decay ? o.mul(state.params[name], decay) : state.params[name];
    const update = o.div(m, o.add(o.mul(o.sqrt(v), invBc2Sqrt), spec.eps));
    out.params[name] = o.sub(p, o.mul(update, stepSize));
    out.m[name] = m;
    out.v[name] = v;
  }
  return { ...out, gradNorm, skipped: o.cast(o.not(finite), lr.dtype) };
}
