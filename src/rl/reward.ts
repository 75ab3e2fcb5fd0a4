/**
 * Reward placement: the token-level reward tensor [B, T] the advantage estimators read.
 * Rewards are only ever placed on a turn's last assistant token (its `rewardPosition`), so every reward
 * sits inside the loss mask, and the row sum always equals the trajectory return whatever the placement.
 */
import { type Batch, trajectoryReturn, turnReward, validateBatch } from './batch.ts';
import { maskedSummary } from './stats.ts';

export type RewardPlacement = 'trajectory-end' | 'per-turn';

export interface PlaceRewardsInput {
  readonly batch: Batch;
  readonly placement: RewardPlacement;
}

export interface PlaceRewardsOutput {
  /** [B, T] rewards; 0 everywhere except turn-end tokens. */
  readonly tokenRewards: Float32Array;
  readonly metrics: Record<string, number>;
}

type PlaceFn = (batch: Batch, row: number, out: Float32Array) => void;

export const REWARD_PLACEMENTS = {
  /** Default (published): the whole return (env rewards + format penalties) on the last assistant token. */
  'trajectory-end': (batch, b, out) => {
    const t = batch.trajectories[b];
    out[b * batch.T + t.turns[t.turns.length - 1].rewardPosition] = trajectoryReturn(t);
  },
  /** Process rewards: each turn's reward + penalty on that turn's last assistant token. */
  'per-turn': (batch, b, out) => {
    for (const turn of batch.trajectories[b].turns) out[b * batch.T + turn.rewardPosition] = turnReward(turn);
  },
} as const satisfies Record<RewardPlacement, PlaceFn>;

export const REWARD_PLACEMENT_NAMES = Object.keys(REWARD_PLACEMENTS) as RewardPlacement[];

export function placeRewards(input: PlaceRewardsInput): PlaceRewardsOutput {
  const { batch, placement } = input;
  validateBatch(batch);
  const tokenRewards = new Float32Array(batch.B * batch.T);
  for (let b = 0; b < batch.B; b++) REWARD_PLACEMENTS[placement](batch, b, tokenRewards);
  const returns = batch.trajectories.map(trajectoryReturn);
  const mask = new Float32Array(returns.length).fill(1);
  return { tokenRewards, metrics: maskedSummary('reward/return', returns, mask) };
}
