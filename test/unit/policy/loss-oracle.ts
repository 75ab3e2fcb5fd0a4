/**
 * The test oracle of the training losses: src/policy/programs/loss.ts (the graph that trains, and the one
 * definition) recomputed in plain float64 TypeScript, one token at a time, from the same LossSpec and with
 * the same metric names, so loss-engine.test.ts can compare the two on any input. The formulas and their
 * sources are in docs/algorithms.md. Conventions, fixed here as in the graph:
 *
 * Tokens: only positions with mask ≠ 0 count, in every loss and every metric.
 * Denominators: trained tokens, and rows with at least one trained token (the seq-mean forms; verl's agg_loss
 *   since its PR #3915); both at least 1, so an empty batch gives 0.
 * Signs: every loss is minimised: loss = pg − entropyCoef·entropy + klCoef·kl_ref.
 * Ratio: r = exp(clamp(logp − oldLogp, ±20)); approx_kl = token mean of −clamp(logp − oldLogp, ±20)
 *   (verl ppo_kl).
 * Clip: pg = max(−A·r, −A·clip(r, 1 − clipLow, 1 + clipHigh)); for A < 0 with dual clip c,
 *   pg = min(pg, −A·c).
 * clip_frac: token mean of [−A·clip(r) > −A·r] (verl pg_clipfrac). pg_loss, entropy and kl_ref use the
 *   spec's aggregation; the other metrics are token means.
 */
import type {
  Aggregation,
  KlEstimator,
  LossKind,
  LossSpec,
  PpoLoss,
  SftLoss,
  ValueLoss,
} from '../../../src/policy/programs/loss.ts';

type Numbers = ArrayLike<number>;

/** Per-token [B, T] inputs, under the graph's names (advantages, old_logprobs, ref_logprobs, returns, old_values). */
export interface OracleInput {
  readonly B: number;
  readonly T: number;
  readonly mask: Numbers;
  readonly logp?: Numbers;
  readonly entropy?: Numbers;
  readonly values?: Numbers;
  readonly inputs: Readonly<Record<string, Numbers>>;
}

export interface OracleResult {
  readonly loss: number;
  readonly metrics: Record<string, number>;
}

interface Rows {
  sums: number[];
  counts: number[];
}

function rows(x: (i: number) => number, mask: Numbers, B: number, T: number): Rows {
  const sums = new Array<number>(B).fill(0);
  const counts = new Array<number>(B).fill(0);
  for (let i = 0; i < B * T; i++) {
    if (mask[i] === 0) continue;
    sums[Math.floor(i / T)] += x(i);
    counts[Math.floor(i / T)] += 1;
  }
  return { sums, counts };
}

const total = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
const trainedRows = (r: Rows): number => Math.max(1, r.counts.filter((n) => n > 0).length);

export const ORACLE_AGGREGATIONS = {
  'token-mean': (r) => total(r.sums) / Math.max(1, total(r.counts)),
  'seq-mean-token-mean': (r) => total(r.sums.map((s, b) => s / Math.max(1, r.counts[b]))) / trainedRows(r),
  'seq-mean-token-sum': (r) => total(r.sums) / trainedRows(r),
} as const satisfies Record<Aggregation, (r: Rows) => number>;

/** x (a per-token function) aggregated over the mask. */
export function aggregate(x: (i: number) => number, input: OracleInput, mode: Aggregation): number {
  return ORACLE_AGGREGATIONS[mode](rows(x, input.mask, input.B, input.T));
}

const clamp = (x: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, x));

export const ORACLE_KL = {
  k1: (logp, ref) => logp - ref,
  k3: (logp, ref) => {
    const d = clamp(ref - logp, -20, 20);
    return clamp(Math.exp(d) - d - 1, -10, 10);
  },
} as const satisfies Record<KlEstimator, (logp: number, ref: number) => number>;

/** The clipped (and dual-clipped) surrogate of one token, and whether the clip bound it. */
export function pgToken(logp: number, oldLogp: number, a: number, s: PpoLoss): { loss: number; clipped: boolean } {
  const ratio = Math.exp(clamp(logp - oldLogp, -20, 20));
  const unclipped = -a * ratio;
  const clippedLoss = -a * clamp(ratio, 1 - s.clipLow, 1 + s.clipHigh);
  const loss = Math.max(unclipped, clippedLoss);
  const bounded = a < 0 && s.dualClip !== null ? Math.min(loss, -a * s.dualClip) : loss;
  return { loss: bounded, clipped: clippedLoss > unclipped };
}

function ppo(s: PpoLoss, x: OracleInput): OracleResult {
  const [logp, old, adv] = [x.logp!, x.inputs.old_logprobs, x.inputs.advantages];
  const agg = (f: (i: number) => number) => aggregate(f, x, s.aggregation);
  const mean = (f: (i: number) => number) => aggregate(f, x, 'token-mean');
  const pgLoss = agg((i) => pgToken(logp[i], old[i], adv[i], s).loss);
  const entropy = agg((i) => x.entropy![i]);
  const klRef = s.kl ? agg((i) => ORACLE_KL[s.kl!.estimator](logp[i], x.inputs.ref_logprobs[i])) : 0;
  const loss = pgLoss - s.entropyCoef * entropy + (s.kl ? s.kl.coef * klRef : 0);
  const metrics = {
    pg_loss: pgLoss,
    entropy,
    kl_ref: klRef,
    clip_frac: mean((i) => (pgToken(logp[i], old[i], adv[i], s).clipped ? 1 : 0)),
    approx_kl: mean((i) => -clamp(logp[i] - old[i], -20, 20)),
  };
  return { loss, metrics };
}

/** 0.5 · aggregate(max((v − R)², (clip(v, v_old ± clip) − R)²)); vf_clip_frac: share where the clip binds. */
function value(s: ValueLoss, x: OracleInput): OracleResult {
  const [v, ret, old] = [x.values!, x.inputs.returns, x.inputs.old_values];
  const errors = (i: number): [number, number] => {
    const vClip = clamp(v[i], old[i] - s.clip, old[i] + s.clip);
    return [(v[i] - ret[i]) ** 2, (vClip - ret[i]) ** 2];
  };
  const loss = 0.5 * aggregate((i) => Math.max(...errors(i)), x, s.aggregation);
  const clipFrac = aggregate((i) => (errors(i)[1] > errors(i)[0] ? 1 : 0), x, 'token-mean');
  const valueMean = aggregate((i) => v[i], x, 'token-mean');
  return { loss, metrics: { value_loss: loss, vf_clip_frac: clipFrac, value_mean: valueMean } };
}

/** Masked negative log-likelihood of the trained tokens; entropy as a token-mean metric. */
function sft(s: SftLoss, x: OracleInput): OracleResult {
  const nll = aggregate((i) => -x.logp![i], x, s.aggregation);
  return { loss: nll, metrics: { nll, entropy: aggregate((i) => x.entropy![i], x, 'token-mean') } };
}

const ORACLES: { readonly [K in LossKind]: (s: Extract<LossSpec, { kind: K }>, x: OracleInput) => OracleResult } = {
  ppo,
  value,
  sft,
};

/** The loss and metrics the engine's graph must give for `spec` on these per-token inputs. */
export function oracleLoss(spec: LossSpec, x: OracleInput): OracleResult {
  return (ORACLES[spec.kind] as (s: LossSpec, x: OracleInput) => OracleResult)(spec, x);
}
