/**
 * Trajectories (as the rollout wrote them) → the two views the later stages read: the RL Batch
 * (groups, turns, loss mask) and the engine's padded token batch. Rows are right-padded to the
 * longest trajectory; padding has attention 0 and loss mask 0.
 */
import type { Batch, TrajectoryRecord } from './batch.ts';
import type { Trajectory } from './rollout.ts';
import type { TrainBatch } from '../policy/programs/batch.ts';

export interface AssembledBatch {
  batch: Batch;
  tokens: TrainBatch;
  /** [B, T] sampling log-probs of the model-written tokens (0 elsewhere). */
  samplingLogprobs: Float32Array;
  /**
   * [B, T] entropy of each model-written token's sampling distribution (0 elsewhere); null when a trajectory has none.
   */
  samplingEntropy: Float32Array | null;
}

export function trajectoryRecord(t: Trajectory): TrajectoryRecord {
  return {
    groupId: `${t.seed}:${t.group}`,
    success: t.success,
    turns: t.turns.map((turn) => ({
      envReward: turn.envReward,
      formatPenalty: turn.formatPenalty,
      rewardPosition: turn.rewardPosition,
      observation: turn.observation,
      actionsProposed: turn.actionsProposed,
      actionsValid: turn.executedActions.length,
      actionsEffective: turn.actionsEffective,
    })),
  };
}

/** Token rows right-padded into one batch: attention 1 on real tokens, the rows' loss masks, 0 on padding. */
export function padSequences(rows: readonly { ids: readonly number[]; mask: readonly number[] }[]): TrainBatch {
  const B = rows.length;
  const T = Math.max(2, ...rows.map((r) => r.ids.length));
  const tokens = new Int32Array(B * T);
  const attentionMask = new Float32Array(B * T);
  const lossMask = new Float32Array(B * T);
  rows.forEach((r, b) => {
    tokens.set(r.ids, b * T);
    attentionMask.fill(1, b * T, b * T + r.ids.length);
    lossMask.set(r.mask, b * T);
  });
  return { batch: B, seqLen: T, tokens, attentionMask, lossMask };
}

export function assemble(trajectories: readonly Trajectory[]): AssembledBatch {
  const tokens = padSequences(trajectories);
  const { batch: B, seqLen: T, lossMask } = tokens;
  const samplingLogprobs = new Float32Array(B * T);
  trajectories.forEach((t, b) => samplingLogprobs.set(t.logprobs, b * T));
  const samplingEntropy = trajectories.every((t) => t.entropy) ? new Float32Array(B * T) : null;
  if (samplingEntropy) trajectories.forEach((t, b) => samplingEntropy.set(t.entropy!, b * T));
  const batch = { B, T, trajectories: trajectories.map(trajectoryRecord), lossMask };
  return { batch, tokens, samplingLogprobs, samplingEntropy };
}
