/**
 * Pluggable losses for train_step, picked from a registry by `kind` (PPO actor, clipped value
 * loss for the critic, masked cross-entropy for SFT). Each loss reads per-token [B, T] tensors
 * that are already aligned with the model's rows (row t scores token t+1; see programs/batch.ts)
 * and returns a scalar loss plus scalar metrics. This is the one definition of the losses that train: the
 * formulas, their sources and the conventions (signs, clamps, denominators) are in docs/algorithms.md, and
 * test/unit/policy/loss-oracle.ts recomputes every loss and metric in float64 to check this graph against.
 * Semantics follow verl's core_algos (docs/spec.md §4).
 */
import type { Value } from '../graph/graph.ts';
import * as o from '../graph/ops.ts';

/** How per-token losses become one number: over all tokens, or per sequence then over sequences. */
export type Aggregation = 'token-mean' | 'seq-mean-token-mean' | 'seq-mean-token-sum';
export type KlEstimator = 'k1' | 'k3';

export interface PpoLoss {
  readonly kind: 'ppo';
  /** Ratio clip range [1 - clipLow, 1 + clipHigh] (StarPO-S: 0.2 / 0.28). */
  readonly clipLow: number;
  readonly clipHigh: number;
  /** Dual-clip constant c for negative advantages (3.0); null disables it. */
  readonly dualClip: number | null;
  readonly entropyCoef: number;
  /** KL to the reference policy: null (StarPO-S) or a coefficient and estimator (k1, or low-variance k3). */
  readonly kl: { readonly coef: number; readonly estimator: KlEstimator } | null;
  readonly aggregation: Aggregation;
}

export interface ValueLoss {
  readonly kind: 'value';
  /** Value clip range around the old values (0.5). */
  readonly clip: number;
  readonly aggregation: Aggregation;
}

export interface SftLoss {
  readonly kind: 'sft';
  readonly aggregation: Aggregation;
}

export type LossSpec = PpoLoss | ValueLoss | SftLoss;
export type LossKind = LossSpec['kind'];

/** What the model provides to a loss, per row [B, T]. */
export interface LossContext {
  readonly logp?: Value; // log-prob of the next token
  readonly entropy?: Value; // entropy of the next-token distribution
  readonly values?: Value; // critic value
  readonly mask: Value; // 1 where the row's next token is trained
  readonly inputs: Readonly<Record<string, Value>>; // the loss's own [B, T] inputs, by name
  readonly norm: Norm;
}

/**
 * Denominators over the whole mini-batch, fed by the caller rather than computed in-graph, so
 * that a mini-batch split into micro-batches sums to exactly the loss and metrics of one pass.
 */
export interface Norm {
  readonly tokens: Value; // scalar: trained tokens (at least 1)
  readonly sequences: Value; // scalar: rows with at least one trained token (at least 1)
}

export interface LossResult {
  readonly loss: Value;
  readonly metrics: Readonly<Record<string, Value>>;
}

interface LossDef<S extends LossSpec> {
  /** Which head the model needs. */
  readonly head: 'lm' | 'value';
  /** Extra per-token float inputs, by name (in feed order). */
  inputs(spec: S): string[];
  build(spec: S, c: LossContext): LossResult;
}

type AggregateFn = (masked: Value, mask: Value, norm: Norm) => Value;

/**
 * Per-token values (already multiplied by the mask) to one number. Both seq-mean forms divide by the rows
 * that have a trained token (norm.sequences), as verl's agg_loss does since its PR #3915.
 */
const AGGREGATIONS = {
  'token-mean': (masked, _mask, norm) => o.div(o.reduceSum(masked, [0, 1], false), norm.tokens),
  'seq-mean-token-mean': (masked, mask, norm) => {
    const perSeq = o.div(o.reduceSum(masked, [1], false), o.max(o.reduceSum(mask, [1], false), 1)); // [B]
    return o.div(o.reduceSum(perSeq, [0], false), norm.sequences);
  },
  'seq-mean-token-sum': (masked, _mask, norm) =>
    o.div(o.reduceSum(o.reduceSum(masked, [1], false), [0], false), norm.sequences),
} as const satisfies Record<Aggregation, AggregateFn>;

export const AGGREGATION_NAMES = Object.keys(AGGREGATIONS) as Aggregation[];

/** Per-token values [B, T] to one number; rows without trained tokens contribute nothing. */
export function aggregate(l: Value, mask: Value, mode: Aggregation, norm: Norm): Value {
  return AGGREGATIONS[mode](o.mul(l, mask), mask, norm);
}

const clip = (x: Value, lo: Value | number, hi: Value | number): Value => o.min(o.max(x, lo), hi);
const asFloat = (b: Value, like: Value): Value => o.cast(b, like.dtype);

const ppo: LossDef<PpoLoss> = {
  head: 'lm',
  inputs: (s) => ['advantages', 'old_logprobs', ...(s.kl ? ['ref_logprobs'] : [])],
  build(s, c) {
    const [logp, adv, mask] = [c.logp!, c.inputs.advantages, c.mask];
    // verl's clamp: a stale token cannot overflow exp; approx_kl reports the same clamped log-ratio (verl ppo_kl).
    const logRatio = clip(o.sub(logp, c.inputs.old_logprobs), -20, 20);
    const ratio = o.exp(logRatio);
    const pg1 = o.mul(o.neg(adv), ratio);
    const pg2 = o.mul(o.neg(adv), clip(ratio, 1 - s.clipLow, 1 + s.clipHigh));
    let pg = o.max(pg1, pg2);
    if (s.dualClip !== null) pg = o.where(o.less(adv, 0), o.min(pg, o.mul(o.neg(adv), s.dualClip)), pg);
    const pgLoss = aggregate(pg, mask, s.aggregation, c.norm);
    const entropy = aggregate(c.entropy!, mask, s.aggregation, c.norm);
    let loss = o.sub(pgLoss, o.mul(entropy, s.entropyCoef));
    let klRef = o.mul(entropy, 0);
    if (s.kl) {
      klRef = aggregate(klEstimate(logp, c.inputs.ref_logprobs, s.kl.estimator), mask, s.aggregation, c.norm);
      loss = o.add(loss, o.mul(klRef, s.kl.coef));
    }
    const clipFrac = aggregate(asFloat(o.greater(pg2, pg1), pg1), mask, 'token-mean', c.norm);
    const approxKl = aggregate(o.neg(logRatio), mask, 'token-mean', c.norm);
    return { loss, metrics: { pg_loss: pgLoss, entropy, kl_ref: klRef, clip_frac: clipFrac, approx_kl: approxKl } };
  },
};

/**
 * Per-token KL to the reference, as verl's kl_penalty: k1 = log π − log π_ref; k3 (low_var_kl) = e^d − d − 1
 * with d = ref − logp clamped to ±20, the result clamped to ±10. The clamp of d is what keeps the gradient
 * finite: without it a token 89 nats below the reference overflows exp in float32, and the clamped branch's
 * zero gradient times an infinite e^d is NaN, which skips the step.
 */
const KL_ESTIMATORS = {
  k1: (logp, ref) => o.sub(logp, ref),
  k3: (logp, ref) => {
    const d = clip(o.sub(ref, logp), -20, 20);
    return clip(o.sub(o.sub(o.exp(d), d), 1), -10, 10);
  },
} as const satisfies Record<KlEstimator, (logp: Value, ref: Value) => Value>;

export const KL_ESTIMATOR_NAMES = Object.keys(KL_ESTIMATORS) as KlEstimator[];

export function klEstimate(logp: Value, ref: Value, estimator: KlEstimator): Value {
  return KL_ESTIMATORS[estimator](logp, ref);
}

const value: LossDef<ValueLoss> = {
  head: 'value',
  inputs: () => ['returns', 'old_values'],
  build(s, c) {
    const [v, ret, old] = [c.values!, c.inputs.returns, c.inputs.old_values];
    const vClipped = clip(v, o.sub(old, s.clip), o.add(old, s.clip));
    const l1 = o.mul(o.sub(v, ret), o.sub(v, ret));
    const l2 = o.mul(o.sub(vClipped, ret), o.sub(vClipped, ret));
    const valueLoss = o.mul(aggregate(o.max(l1, l2), c.mask, s.aggregation, c.norm), 0.5);
    const clipFrac = aggregate(asFloat(o.greater(l2, l1), l1), c.mask, 'token-mean', c.norm);
    const valueMean = aggregate(v, c.mask, 'token-mean', c.norm);
    return { loss: valueLoss, metrics: { value_loss: valueLoss, vf_clip_frac: clipFrac, value_mean: valueMean } };
  },
};

const sft: LossDef<SftLoss> = {
  head: 'lm',
  inputs: () => [],
  build(s, c) {
    const nll = aggregate(o.neg(c.logp!), c.mask, s.aggregation, c.norm);
    return { loss: nll, metrics: { nll, entropy: aggregate(c.entropy!, c.mask, 'token-mean', c.norm) } };
  },
};

/**
 * Whether the loss differentiates the entropy (PPO's entropy bonus with a non-zero coefficient); SFT reads
 * it as a metric and a value loss has none. Without it the LM head's backward keeps one [N, V] tensor less.
 */
export function entropyInLoss(spec: LossSpec): boolean {
  return spec.kind === 'ppo' && spec.entropyCoef !== 0;
}

/** The registry: one definition per loss kind. */
export const LOSSES: { readonly [K in LossKind]: LossDef<Extract<LossSpec, { kind: K }>> } = { ppo, value, sft };

export function lossDef(spec: LossSpec): LossDef<LossSpec> {
  return LOSSES[spec.kind] as LossDef<LossSpec>;
}

/** StarPO-S actor defaults (docs/spec.md §4). */
export const STARPO_S_PPO: PpoLoss = {
  kind: 'ppo',
  clipLow: 0.2,
  clipHigh: 0.28,
  dualClip: 3,
  entropyCoef: 0.001,
  kl: null,
  aggregation: 'token-mean',
};
export const DEFAULT_VALUE_LOSS: ValueLoss = { kind: 'value', clip: 0.5, aggregation: 'token-mean' };
