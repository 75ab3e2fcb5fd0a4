/**
 * Small numeric helpers shared by the RL stages. One convention everywhere, stated once:
 * - std/var of a set of numbers is the **sample** (Bessel-corrected, n−1) statistic, like torch.std
 *   and torch.var, which veRL/RAGEN use for group std, filters and explained variance;
 *   a set of fewer than two numbers has std 0.
 * - a set whose values are all identical has std exactly 0 (checked directly, because the
 *   floating-point mean of [0.1, 0.1, 0.1] is not 0.1 and would leave a 1e-17 "variance").
 * - masked reductions count positions where mask ≠ 0; an empty mask reduces to 0.
 * Sums are accumulated in float64.
 */

export type Numbers = ArrayLike<number>;

export function sum(xs: Numbers): number {
  let s = 0;
  for (let i = 0; i < xs.length; i++) s += xs[i];
  return s;
}

export function mean(xs: Numbers): number {
  return xs.length === 0 ? 0 : sum(xs) / xs.length;
}

export function allEqual(xs: Numbers): boolean {
  for (let i = 1; i < xs.length; i++) if (xs[i] !== xs[0]) return false;
  return true;
}

/** Sample variance (n−1); 0 for fewer than two values or identical values. */
export function sampleVar(xs: Numbers): number {
  if (xs.length < 2 || allEqual(xs)) return 0;
  const m = mean(xs);
  let s = 0;
  for (let i = 0; i < xs.length; i++) s += (xs[i] - m) ** 2;
  return s / (xs.length - 1);
}

export function sampleStd(xs: Numbers): number {
  return Math.sqrt(sampleVar(xs));
}

/** Median of the values (mean of the middle two for an even count); 0 for none. */
export function median(xs: Numbers): number {
  if (xs.length === 0) return 0;
  const s = Array.from(xs).sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** The values at positions where mask ≠ 0, in order. */
export function masked(xs: Numbers, mask: Numbers): number[] {
  const out: number[] = [];
  for (let i = 0; i < mask.length; i++) if (mask[i] !== 0) out.push(xs[i]);
  return out;
}

export function maskedMean(xs: Numbers, mask: Numbers): number {
  return mean(masked(xs, mask));
}

export interface WhitenOptions {
  /** Divide by the n−1 variance (veRL's masked_whiten default) rather than the n one. Default true. */
  unbiased?: boolean;
  /** Added to the variance before the square root. Default 1e-8 (veRL). */
  eps?: number;
  /** Subtract the mean (true) or only rescale (false, keeps the sign of every value). Default true. */
  shiftMean?: boolean;
}

/**
 * Whitening over the loss mask: (x − masked mean) / sqrt(masked var + eps) on masked positions,
 * exactly 0 elsewhere (veRL leaves garbage there; zero is safer for anything that forgets the mask).
 * With fewer than two masked positions, or identical masked values, the variance is 0 and the result is
 * (x − mean)/sqrt(eps) = 0 for shiftMean, x/sqrt(eps) otherwise — callers should not whiten a single token.
 */
export function whitenMasked(xs: Numbers, mask: Numbers, options: WhitenOptions = {}): Float32Array {
  const { unbiased = true, eps = 1e-8, shiftMean = true } = options;
  const vals = masked(xs, mask);
  const n = vals.length;
  const m = mean(vals);
  const variance = unbiased ? sampleVar(vals) : (sampleVar(vals) * Math.max(n - 1, 0)) / Math.max(n, 1);
  const scale = 1 / Math.sqrt(variance + eps);
  const out = new Float32Array(xs.length);
  for (let i = 0; i < xs.length; i++) {
    if (mask[i] !== 0) out[i] = shiftMean ? (xs[i] - m) * scale : xs[i] * scale;
  }
  return out;
}

/** min/mean/max of the masked values, as metrics under `prefix` (all 0 for an empty mask). */
export function maskedSummary(prefix: string, xs: Numbers, mask: Numbers): Record<string, number> {
  const vals = masked(xs, mask);
  if (vals.length === 0) return { [`${prefix}/mean`]: 0, [`${prefix}/min`]: 0, [`${prefix}/max`]: 0 };
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of vals) {
    lo = Math.min(lo, v);
    hi = Math.max(hi, v);
  }
  return { [`${prefix}/mean`]: mean(vals), [`${prefix}/min`]: lo, [`${prefix}/max`]: hi };
}

/**
 * Mean of the paired differences b_i − a_i with a normal-approximation interval, mean ± z·s/√n (s the
 * sample std of the differences; z = 1.96 for 95%). For success per validation seed: the gain of one
 * checkpoint over another on the same seeds. n < 2 gives an interval of width 0.
 */
export function pairedDifference(a: Numbers, b: Numbers, z = 1.96): { mean: number; low: number; high: number } {
  const d = Array.from(b, (x, i) => x - (a[i] as number));
  const m = mean(d);
  const half = d.length < 2 ? 0 : (z * sampleStd(d)) / Math.sqrt(d.length);
  return { mean: m, low: m - half, high: m + half };
}
