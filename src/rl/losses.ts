/**
 * Plain-TypeScript (float64) reference of the PPO-family losses. The engine builds the same losses as ONNX
 * graphs and is tested against these functions, so every convention is fixed here, in one place:
 *
 * Tokens: only positions with mask ≠ 0 count, in every loss and every metric; per-token outputs are 0 elsewhere.
 * Signs: every returned loss is minimised. The policy-gradient term is −A·ratio; the entropy term enters
 *   the total with a minus sign (a bonus); the KL term with a plus sign:
 *     loss = pg − entropyCoef·entropy + klCoef·kl
 * Ratio: r = exp(clamp(logp − oldLogp, −20, 20)) (veRL's clamp; it only guards overflow).
 * Clip: pg = max(−A·r, −A·clip(r, 1 − clipLow, 1 + clipHigh)); for A < 0 with dual clip c > 0 (3.0),
 *   pg = min(that, −A·c), which bounds the loss of a very unlikely-now token with negative advantage.
 * Aggregation (LOSS_AGGREGATIONS) applies to pg, entropy and kl alike; metrics are always token means.
 * Metrics:
 *   clip_fraction      = token mean of [−A·clip(r) > −A·r], i.e. the clipped branch is strictly the larger
 *                        one and the token gets no gradient from the ratio (veRL pg_clipfrac);
 *   dual_clip_fraction = token mean of [A < 0 and −A·c < max(…)] (dual clip binding; veRL pg_clipfrac_lower);
 *   approx_kl          = token mean of (oldLogp − logp), the k1 estimate of KL(old‖new) (veRL ppo_kl);
 *   approx_kl_k3       = token mean of (r − 1) − log r with r = exp(logp − oldLogp), the non-negative k3 form.
 * KL to the reference: k1 = logp − refLogp; k3 = e^d − d − 1 with d = clamp(refLogp − logp, ±20), the
 *   result clamped to [−10, 10] (veRL low_var_kl).
 */
import { BatchError } from '../errors.ts';
import type { Numbers } from './stats.ts';

export type LossAggregation = 'token-mean' | 'seq-mean-token-mean' | 'seq-mean-token-sum';
export type KlEstimator = 'k1' | 'k3';

/** x and mask are [B, T]; returns one scalar. */
export type AggregateFn = (x: Numbers, mask: Numbers, B: number, T: number) => number;

function rowSums(x: Numbers, mask: Numbers, B: number, T: number): { sums: number[]; counts: number[] } {
  const sums = new Array<number>(B).fill(0);
  const counts = new Array<number>(B).fill(0);
  for (let i = 0; i < B * T; i++) {
    if (mask[i] === 0) continue;
    sums[Math.floor(i / T)] += x[i];
    counts[Math.floor(i / T)] += 1;
  }
  return { sums, counts };
}

export const LOSS_AGGREGATIONS = {
  /** Σ mask·x / Σ mask over the whole (mini-)batch: every token weighs the same (DAPO, StarPO default). */
  'token-mean': (x, mask, B, T) => {
    const { sums, counts } = rowSums(x, mask, B, T);
    const n = counts.reduce((a, b) => a + b, 0);
    return n === 0 ? 0 : sums.reduce((a, b) => a + b, 0) / n;
  },
  /** Mean over sequences with ≥ 1 masked token of their token mean: every trajectory weighs the same. */
  'seq-mean-token-mean': (x, mask, B, T) => {
    const { sums, counts } = rowSums(x, mask, B, T);
    const means = sums.flatMap((s, b) => (counts[b] > 0 ? [s / counts[b]] : []));
    return means.length === 0 ? 0 : means.reduce((a, b) => a + b, 0) / means.length;
  },
  /** Mean over all B sequences of their token sum (Dr.GRPO-style, no length normalisation). */
  'seq-mean-token-sum': (x, mask, B, T) => (B === 0 ? 0 : rowSums(x, mask, B, T).sums.reduce((a, b) => a + b, 0) / B),
} as const satisfies Record<LossAggregation, AggregateFn>;

export const LOSS_AGGREGATION_NAMES = Object.keys(LOSS_AGGREGATIONS) as LossAggregation[];

const tokenMean = LOSS_AGGREGATIONS['token-mean'];

function check(B: number, T: number, arrays: Record<string, Numbers | undefined>): void {
  for (const [name, xs] of Object.entries(arrays)) {
    if (xs !== undefined && xs.length !== B * T) {
      throw new BatchError(`${name} has ${xs.length} entries, expected ${B}·${T}`);
    }
  }
}

export const KL_ESTIMATORS = {
  k1: (logp, refLogp) => logp - refLogp,
  k3: (logp, refLogp) => {
    const d = Math.min(20, Math.max(-20, refLogp - logp));
    return Math.min(10, Math.max(-10, Math.exp(d) - d - 1));
  },
} as const satisfies Record<KlEstimator, (logp: number, refLogp: number) => number>;

export const KL_ESTIMATOR_NAMES = Object.keys(KL_ESTIMATORS) as KlEstimator[];

export interface PolicyLossParams {
  /** Lower clip ε: ratio ≥ 1 − clipLow (0.2). */
  readonly clipLow: number;
  /** Upper clip ε: ratio ≤ 1 + clipHigh (0.2 vanilla, 0.28 clip-higher). */
  readonly clipHigh: number;
  /** Dual-clip constant c (> 1) for A < 0; 0 turns dual clip off. */
  readonly dualClip: number;
  readonly entropyCoef: number;
  readonly klCoef: number;
  readonly klEstimator: KlEstimator;
  readonly aggregation: LossAggregation;
}

export interface PolicyLossInput {
  readonly B: number;
  readonly T: number;
  /** [B, T] loss mask (1 on assistant tokens). */
  readonly mask: Numbers;
  /** [B, T] log-probabilities of the sampled tokens under the current policy. */
  readonly logp: Numbers;
  /** [B, T] the same under the policy that generated the rollout. */
  readonly oldLogp: Numbers;
  readonly advantages: Numbers;
  /** [B, T] reference-policy log-probabilities; required when klCoef ≠ 0. */
  readonly refLogp?: Numbers;
  /** [B, T] per-token entropy of the current policy's distribution; required when entropyCoef ≠ 0. */
  readonly entropy?: Numbers;
  readonly params: PolicyLossParams;
}

export interface PolicyLossOutput {
  /** pg − entropyCoef·entropy + klCoef·kl. */
  readonly loss: number;
  readonly pgLoss: number;
  readonly entropy: number;
  readonly kl: number;
  /** [B, T] per-token clipped surrogate loss (0 off the mask). */
  readonly tokenPgLoss: Float64Array;
  readonly metrics: Record<string, number>;
}

interface PgToken {
  loss: number;
  clipped: boolean;
  dualClipped: boolean;
}

/** The clipped (and dual-clipped) surrogate of one token. */
export function pgTokenLoss(logp: number, oldLogp: number, a: number, p: PolicyLossParams): PgToken {
  const ratio = Math.exp(Math.min(20, Math.max(-20, logp - oldLogp)));
  const unclipped = -a * ratio;
  const clippedLoss = -a * Math.min(1 + p.clipHigh, Math.max(1 - p.clipLow, ratio));
  const loss = Math.max(unclipped, clippedLoss);
  const clipped = clippedLoss > unclipped;
  if (a >= 0 || p.dualClip <= 0) return { loss, clipped, dualClipped: false };
  const bound = -a * p.dualClip;
  return { loss: Math.min(loss, bound), clipped, dualClipped: bound < loss };
}

export function policyLoss(input: PolicyLossInput): PolicyLossOutput {
  const { B, T, mask, logp, oldLogp, advantages, refLogp, entropy, params } = input;
  check(B, T, { mask, logp, oldLogp, advantages, refLogp, entropy });
  if (params.klCoef !== 0 && !refLogp) throw new BatchError('policyLoss: klCoef ≠ 0 needs refLogp');
  if (params.entropyCoef !== 0 && !entropy) throw new BatchError('policyLoss: entropyCoef ≠ 0 needs entropy');
  const n = B * T;
  const tokenPgLoss = new Float64Array(n);
  const clipped = new Float64Array(n);
  const dual = new Float64Array(n);
  const k1Old = new Float64Array(n);
  const k3Old = new Float64Array(n);
  const klRef = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    if (mask[i] === 0) continue;
    const tok = pgTokenLoss(logp[i], oldLogp[i], advantages[i], params);
    tokenPgLoss[i] = tok.loss;
    clipped[i] = tok.clipped ? 1 : 0;
    dual[i] = tok.dualClipped ? 1 : 0;
    k1Old[i] = oldLogp[i] - logp[i];
    k3Old[i] = Math.expm1(logp[i] - oldLogp[i]) - (logp[i] - oldLogp[i]);
    if (refLogp) klRef[i] = KL_ESTIMATORS[params.klEstimator](logp[i], refLogp[i]);
  }
  const agg = (x: Numbers) => LOSS_AGGREGATIONS[params.aggregation](x, mask, B, T);
  const pgLoss = agg(tokenPgLoss);
  const ent = entropy ? agg(entropy) : 0;
  const kl = refLogp ? agg(klRef) : 0;
  const loss = pgLoss - params.entropyCoef * ent + params.klCoef * kl;
  const metrics = {
    'actor/pg_loss': pgLoss,
    'actor/entropy': ent,
    'actor/kl_ref': kl,
    'actor/loss': loss,
    'actor/clip_fraction': tokenMean(clipped, mask, B, T),
    'actor/dual_clip_fraction': tokenMean(dual, mask, B, T),
    'actor/approx_kl': tokenMean(k1Old, mask, B, T),
    'actor/approx_kl_k3': tokenMean(k3Old, mask, B, T),
  };
  return { loss, pgLoss, entropy: ent, kl, tokenPgLoss, metrics };
}

export interface ValueLossInput {
  readonly B: number;
  readonly T: number;
  readonly mask: Numbers;
  /** [B, T] current critic predictions v. */
  readonly values: Numbers;
  /** [B, T] predictions of the critic that scored the rollout, v_old. */
  readonly oldValues: Numbers;
  /** [B, T] value targets R (GAE returns). */
  readonly returns: Numbers;
  /** Clip range around v_old (0.5). */
  readonly clip: number;
  readonly aggregation: LossAggregation;
}

export interface ValueLossOutput {
  /** 0.5 · aggregate(max((v − R)², (clip(v, v_old ± clip) − R)²)). */
  readonly loss: number;
  readonly metrics: Record<string, number>;
}

/** critic/clip_fraction = token mean of [clipped error > unclipped error] (veRL vf_clipfrac). */
export function valueLoss(input: ValueLossInput): ValueLossOutput {
  const { B, T, mask, values, oldValues, returns, clip, aggregation } = input;
  check(B, T, { mask, values, oldValues, returns });
  const n = B * T;
  const errors = new Float64Array(n);
  const clipped = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    if (mask[i] === 0) continue;
    const vClip = Math.min(oldValues[i] + clip, Math.max(oldValues[i] - clip, values[i]));
    const e1 = (values[i] - returns[i]) ** 2;
    const e2 = (vClip - returns[i]) ** 2;
    errors[i] = Math.max(e1, e2);
    clipped[i] = e2 > e1 ? 1 : 0;
  }
  const loss = 0.5 * LOSS_AGGREGATIONS[aggregation](errors, mask, B, T);
  return {
    loss,
    metrics: {
      'critic/value_loss': loss,
      'critic/clip_fraction': tokenMean(clipped, mask, B, T),
      'critic/value_mean': tokenMean(values, mask, B, T),
    },
  };
}

/** log softmax of one row of logits, computed stably (max subtracted). */
export function logSoftmax(logits: Numbers): Float64Array {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) max = Math.max(max, logits[i]);
  let z = 0;
  for (let i = 0; i < logits.length; i++) z += Math.exp(logits[i] - max);
  const logZ = max + Math.log(z);
  return Float64Array.from(logits, (x) => x - logZ);
}

/** Entropy −Σ p·log p of the softmax of one row of logits (nats). */
export function entropyFromLogits(logits: Numbers): number {
  const lp = logSoftmax(logits);
  let h = 0;
  for (const l of lp) h -= Math.exp(l) * l;
  return h;
}

export interface CrossEntropyInput {
  readonly B: number;
  readonly T: number;
  /** Vocabulary size V. */
  readonly V: number;
  /** [B, T, V] logits; position t predicts targets[b, t] (the caller has already shifted by one). */
  readonly logits: Numbers;
  /** [B, T] target token ids. */
  readonly targets: Numbers;
  readonly mask: Numbers;
  readonly aggregation: LossAggregation;
}

/** Masked cross-entropy (nats): aggregate of −log softmax(logits[b, t])[targets[b, t]] over the mask (SFT). */
export function maskedCrossEntropy(input: CrossEntropyInput): { loss: number; metrics: Record<string, number> } {
  const { B, T, V, logits, targets, mask, aggregation } = input;
  check(B, T, { targets, mask });
  if (logits.length !== B * T * V) {
    throw new BatchError(`logits has ${logits.length} entries, expected ${B}·${T}·${V}`);
  }
  const nll = new Float64Array(B * T);
  for (let i = 0; i < B * T; i++) {
    if (mask[i] === 0) continue;
    const target = targets[i];
    if (!Number.isInteger(target) || target < 0 || target >= V) {
      throw new BatchError(`targets[${i}] = ${target} not in [0, ${V})`);
    }
    const row = Array.prototype.slice.call(logits, i * V, (i + 1) * V) as number[];
    nll[i] = -logSoftmax(row)[target];
  }
  const loss = LOSS_AGGREGATIONS[aggregation](nll, mask, B, T);
  return { loss, metrics: { 'sft/loss': loss, 'sft/tokens': countMasked(mask) } };
}

function countMasked(mask: Numbers): number {
  let n = 0;
  for (let i = 0; i < mask.length; i++) if (mask[i] !== 0) n++;
  return n;
}
