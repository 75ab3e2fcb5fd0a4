/**
 * Advantage estimation: one registry of estimators (src/rl/estimators/*) and the composed stage the
 * trainer calls (estimator, then optional whitening over the loss mask).
 *
 * | name                  | needs critic | advantage of trajectory i / token t                          |
 * |-----------------------|--------------|--------------------------------------------------------------|
 * | gae                   | yes          | GAE(γ, λ) over assistant tokens; also value targets           |
 * | grpo                  | no           | (r_i − group mean)/(group std + 1e-6), or r_i − mean (Dr.GRPO) |
 * | rloo                  | no           | r_i − mean of the other rewards in the group                 |
 * | reinforce++           | no           | discounted token returns, whitened over the batch            |
 * | reinforce++-baseline  | no           | r_i − group mean, whitened over the batch                    |
 * | gigpo                 | no           | episode (r_i − group mean) + ω · step (anchor-group) advantage |
 * Conventions (group std, groups of one, masked tokens) are in estimators/common.ts and estimators/gae.ts.
 */
import { type AdvantageFn, type AdvantageInput, type AdvantageOutput } from './estimators/common.ts';
import { gae } from './estimators/gae.ts';
import { gigpo } from './estimators/gigpo.ts';
import { grpo, reinforcePlusPlus, reinforcePlusPlusBaseline, rloo } from './estimators/group.ts';
import { maskedSummary, type WhitenOptions, whitenMasked } from './stats.ts';

export type { AdvantageFn, AdvantageInput, AdvantageOutput, AdvantageParams } from './estimators/common.ts';
export { STD_EPS } from './estimators/common.ts';
export { whitenMasked, type WhitenOptions } from './stats.ts';

export type AdvantageName = 'gae' | 'grpo' | 'rloo' | 'reinforce++' | 'reinforce++-baseline' | 'gigpo';

export const ADVANTAGES = {
  gae,
  grpo,
  rloo,
  'reinforce++': reinforcePlusPlus,
  'reinforce++-baseline': reinforcePlusPlusBaseline,
  gigpo,
} as const satisfies Record<AdvantageName, AdvantageFn>;

export const ADVANTAGE_NAMES = Object.keys(ADVANTAGES) as AdvantageName[];

/** Estimators that need critic values (and return value targets). */
export const NEEDS_CRITIC: Readonly<Record<AdvantageName, boolean>> = {
  gae: true,
  grpo: false,
  rloo: false,
  'reinforce++': false,
  'reinforce++-baseline': false,
  gigpo: false,
};

export interface ComputeAdvantagesInput extends AdvantageInput {
  readonly estimator: AdvantageName;
  /**
   * Whiten the estimator's advantages over the loss mask afterwards (published StarPO GAE: yes, with
   * n−1 variance, veRL's masked_whiten). REINFORCE++ already whitens; doing it twice is harmless but pointless.
   */
  readonly whiten: boolean;
  readonly whitenOptions?: WhitenOptions;
}

export function computeAdvantages(input: ComputeAdvantagesInput): AdvantageOutput {
  const out = ADVANTAGES[input.estimator](input);
  if (!input.whiten) return out;
  const advantages = whitenMasked(out.advantages, input.batch.lossMask, input.whitenOptions);
  const metrics = { ...out.metrics, ...maskedSummary('advantages/whitened', advantages, input.batch.lossMask) };
  return { ...out, advantages, metrics };
}
