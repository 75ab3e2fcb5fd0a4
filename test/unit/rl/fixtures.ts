/** Tiny literal batches for the RL unit tests. */
import type { Batch, TrajectoryRecord, BatchTurn } from '../../../src/rl/batch.ts';

/** A turn: [reward, rewardPosition, anchor?, formatPenalty?]. Actions: 1 proposed, 1 valid, 1 effective. */
export type TurnSpec = [reward: number, position: number, anchor?: string, penalty?: number];

export function turn([reward, rewardPosition, anchor = '', formatPenalty = 0]: TurnSpec): BatchTurn {
  const actions = { actionsProposed: 1, actionsValid: 1, actionsEffective: 1 };
  return { envReward: reward, formatPenalty, rewardPosition, observation: anchor, ...actions };
}

export function traj(groupId: string, turns: TurnSpec[], success = false): TrajectoryRecord {
  return { groupId, success, turns: turns.map(turn) };
}

/** One mask string per row, e.g. '0110111' (1 = assistant token); all rows the same length T. */
export function batchOf(trajectories: TrajectoryRecord[], masks: string[]): Batch {
  const T = masks[0].length;
  return { B: trajectories.length, T, trajectories, lossMask: Float32Array.from(masks.join(''), (c) => Number(c)) };
}

/** Single-turn trajectories with the given returns, one per row, mask '1' (T = 1), reward on token 0. */
export function outcomes(groups: Record<string, number[]>): Batch {
  const ts = Object.entries(groups).flatMap(([g, rs]) => rs.map((r) => traj(g, [[r, 0]], r > 0)));
  return batchOf(
    ts,
    ts.map(() => '1'),
  );
}

/** Rounds every element to `digits` decimals, for comparisons with a stated tolerance. */
export function round(xs: ArrayLike<number>, digits = 6): number[] {
  return Array.from(xs, (x) => Number(x.toFixed(digits)) + 0);
}
