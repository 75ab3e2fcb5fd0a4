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
}

export function trajectoryRecord(t: Trajectory): TrajectoryRecord {
  return {
    groupId: `${t.seed}:${t.group}`,
    success: t.success,
    turns: t.turns.map((turn) => ({
      reward: turn.envReward, formatPenalty: turn.formatPenalty, rewardPosition: turn.rewardPosition,
      anchor: turn.observation, actionsProposed: turn.actionsProposed, actionsValid: turn.executed.length,
      actionsEffective: turn.actionsEffective,
    })),
  };
}

export function assemble(trajectories: readonly Trajectory[]): AssembledBatch {
  const B = trajectories.length;
  const T = Math.max(2, ...trajectories.map((t) => t.ids.length));
  const tokens = new Int32Array(B * T);
  const attentionMask = new Float32Array(B * T);
  const lossMask = new Float32Array(B * T);
  const samplingLogprobs = new Float32Array(B * T);
  trajectories.forEach((t, b) => {
    tokens.set(t.ids, b * T);
    attentionMask.fill(1, b * T, b * T + t.ids.length);
    lossMask.set(t.mask, b * T);
    samplingLogprobs.set(t.logprobs, b * T);
  });
  return {
    batch: { B, T, trajectories: trajectories.map(trajectoryRecord), lossMask },
    tokens: { batch: B, seqLen: T, tokens, attentionMask, lossMask },
    samplingLogprobs,
  };
}
