/**
 * Critic-free estimators built on per-trajectory outcome scores (the row sum of token rewards, i.e. the
 * trajectory return) and the environment groups: GRPO, RLOO, REINFORCE++ and its group-baseline form.
 * Each broadcasts one scalar per trajectory over its assistant tokens, except plain REINFORCE++, which
 * uses per-token discounted returns.
 */
import { groupRows } from '../batch.ts';
import { allEqual, maskedSummary, sum, whitenMasked } from '../stats.ts';
import { type AdvantageInput, type AdvantageOutput, broadcastRows, centreInGroups, rowScores } from './common.ts';
import { discountedTokenReturns } from './gae.ts';

function output(input: AdvantageInput, advantages: Float32Array): AdvantageOutput {
  return { advantages, returns: null, metrics: maskedSummary('advantages', advantages, input.batch.lossMask) };
}

/** GRPO: (r − group mean)/(group std + 1e-6); Dr.GRPO (normByStd false): r − group mean. */
export function grpo(input: AdvantageInput): AdvantageOutput {
  const { batch, tokenRewards, params } = input;
  const centred = centreInGroups(rowScores(batch, tokenRewards), groupRows(batch.trajectories), params.normByStd);
  return output(input, broadcastRows(batch, centred));
}

/** RLOO: r_i − mean of the other rewards in the group; a group of one gets 0. */
export function rloo(input: AdvantageInput): AdvantageOutput {
  const { batch, tokenRewards } = input;
  const scores = rowScores(batch, tokenRewards);
  const adv = new Array<number>(scores.length).fill(0);
  for (const rows of groupRows(batch.trajectories).rows) {
    const vals = rows.map((r) => scores[r]);
    if (rows.length < 2 || allEqual(vals)) continue; // exactly 0, not an ulp of float noise
    const total = sum(vals);
    for (const r of rows) adv[r] = scores[r] - (total - scores[r]) / (rows.length - 1);
  }
  return output(input, broadcastRows(batch, adv));
}

/** REINFORCE++: discounted token returns (γ per assistant token) whitened over the batch's loss mask. */
export function reinforcePlusPlus(input: AdvantageInput): AdvantageOutput {
  const { batch, tokenRewards, params } = input;
  const returns = discountedTokenReturns(batch, tokenRewards, params.gamma);
  return output(input, whitenMasked(returns, batch.lossMask));
}

/** REINFORCE++ with a group baseline: (r − group mean) broadcast over tokens, whitened over the batch. */
export function reinforcePlusPlusBaseline(input: AdvantageInput): AdvantageOutput {
  const { batch, tokenRewards } = input;
  const centred = centreInGroups(rowScores(batch, tokenRewards), groupRows(batch.trajectories), false);
  return output(input, whitenMasked(broadcastRows(batch, centred), batch.lossMask));
}
