/**
 * Token-level estimators that walk each row backwards: GAE with a critic, and REINFORCE++'s
 * discounted returns.
 *
 * Masked-token convention (multi-turn): the MDP's time steps are the assistant tokens only. Walking a
 * row from its end, unmasked tokens (observations, user turns, padding) are skipped entirely: they get
 * advantage 0 and return 0, and they neither discount nor reset the running sums. So for an assistant
 * token t the "next value" is the value of the next *assistant* token t' > t (the first token of the
 * next turn when t ends a turn), and 0 after the last one. This is RAGEN's
 * compute_gae_advantage_return_with_loss_mask; veRL's single-turn GAE is the special case of a contiguous
 * response. γ and λ therefore discount per assistant token, not per position.
 *   δ_t = r_t + γ·V(t') − V(t),   A_t = δ_t + γλ·A_t',   R_t = A_t + V(t)   (value target)
 * With γ = λ = 1: A_t = (sum of rewards at masked tokens ≥ t) − V(t).
 */
import { type Batch, assertTokenShape } from '../batch.ts';
import { BatchError } from '../../errors.ts';
import { maskedSummary } from '../stats.ts';
import type { AdvantageInput, AdvantageOutput } from './common.ts';

/** Rewards must sit on assistant tokens; one outside the mask would be silently lost. */
function assertRewardsInMask(batch: Batch, tokenRewards: Float32Array): void {
  assertTokenShape('tokenRewards', tokenRewards, batch.B, batch.T);
  for (let i = 0; i < tokenRewards.length; i++) {
    if (tokenRewards[i] !== 0 && batch.lossMask[i] === 0) {
      throw new BatchError(`tokenRewards[${i}] = ${tokenRewards[i]} lies outside the loss mask`);
    }
  }
}

export function gae(input: AdvantageInput): AdvantageOutput {
  const { batch, tokenRewards, values, params } = input;
  if (!values) throw new BatchError('gae needs critic values');
  assertTokenShape('values', values, batch.B, batch.T);
  assertRewardsInMask(batch, tokenRewards);
  const { B, T, lossMask } = batch;
  const advantages = new Float32Array(B * T);
  const returns = new Float32Array(B * T);
  for (let b = 0; b < B; b++) {
    let nextValue = 0;
    let lastGae = 0;
    for (let c = T - 1; c >= 0; c--) {
      const i = b * T + c;
      if (lossMask[i] === 0) continue;
      const delta = tokenRewards[i] + params.gamma * nextValue - values[i];
      lastGae = delta + params.gamma * params.lambda * lastGae;
      advantages[i] = lastGae;
      returns[i] = lastGae + values[i];
      nextValue = values[i];
    }
  }
  const metrics = {
    ...maskedSummary('advantages', advantages, lossMask),
    ...maskedSummary('returns', returns, lossMask),
    ...maskedSummary('values', values, lossMask),
  };
  return { advantages, returns, metrics };
}

/**
 * Discounted reward-to-go over assistant tokens (same skipping convention as gae). veRL's REINFORCE++ resets
 * the running return at every unmasked token, which in a multi-turn row would cut credit at each observation;
 * here observations are skipped, so earlier turns see later rewards.
 */
export function discountedTokenReturns(batch: Batch, tokenRewards: Float32Array, gamma: number): Float64Array {
  assertRewardsInMask(batch, tokenRewards);
  const { B, T, lossMask } = batch;
  const out = new Float64Array(B * T);
  for (let b = 0; b < B; b++) {
    let running = 0;
    for (let c = T - 1; c >= 0; c--) {
      const i = b * T + c;
      if (lossMask[i] === 0) continue;
      running = tokenRewards[i] + gamma * running;
      out[i] = running;
    }
  }
  return out;
}
