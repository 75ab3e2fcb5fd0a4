/**
 * Off-policy correction: truncated importance sampling (TIS) between the log-probs a rollout sampled
 * with (the behaviour policy, an older version under asyncStaleness) and the old log-probs the actor
 * recomputed before its update (the policy it trains from). Per model-written token
 *   w_t = min(exp(oldLogprob_t − behaviourLogprob_t), cap)
 * multiplies that token's PPO policy-gradient term (not the entropy bonus or the KL term), with no
 * gradient through w — the token-level truncation of verl's rollout IS and SkyRL's off-policy correction.
 * Because w ≥ 0 scales r·A and clip(r)·A alike, min/max and the dual clip pick the same branch, so the
 * weighted loss equals the PPO loss with advantages w_t·A_t: the correction is applied to the advantages
 * and leaves the loss graph alone. Pure; see docs/async.md.
 */

export interface TisInput {
  /** [B, T] per-token advantages of the trained rows. */
  advantages: Float32Array;
  /** [B, T] old log-probs recomputed by the training policy. */
  oldLogprobs: Float32Array;
  /** [B, T] log-probs the rollout sampled with. */
  behaviourLogprobs: Float32Array;
  /** [B, T] 1 on model-written tokens. */
  lossMask: Float32Array;
  cap: number;
}

export interface TisOutput {
  advantages: Float32Array;
  metrics: Record<string, number>;
}

/**
 * Advantages weighted by w_t on the loss mask (elsewhere unchanged), and the ratio's mean and max over
 * those tokens with the share of them the cap truncated (tis/ratio_mean, tis/ratio_max, tis/capped_share).
 */
export function truncatedImportanceSampling(input: TisInput): TisOutput {
  const { oldLogprobs, behaviourLogprobs, lossMask, cap } = input;
  const advantages = Float32Array.from(input.advantages);
  let n = 0;
  let sum = 0;
  let max = 0;
  let capped = 0;
  for (let t = 0; t < lossMask.length; t++) {
    if (lossMask[t] === 0) continue;
    const ratio = Math.exp(oldLogprobs[t] - behaviourLogprobs[t]);
    n++;
    sum += ratio;
    max = Math.max(max, ratio);
    if (ratio > cap) capped++;
    advantages[t] = Math.min(ratio, cap) * advantages[t];
  }
  const metrics: Record<string, number> =
    n === 0 ? {} : { 'tis/ratio_mean': sum / n, 'tis/ratio_max': max, 'tis/capped_share': capped / n };
  return { advantages, metrics };
}
