/**
 * The data every pure RL stage reads: a batch of B trajectories and their token layout.
 *
 * Conventions (the one place they are defined):
 * - Token data is flat, padded, row-major [B, T] (`Float32Array`, index b·T + t).
 * - `lossMask[b·T + t]` is 1 exactly on tokens the model wrote in an assistant turn, 0 on everything else
 *   (system, user, observation, tool-output and padding tokens). Nothing else is ever trained.
 * - A trajectory is a list of turns. Turn k owns the masked tokens with index in (pos[k−1], pos[k]], where
 *   pos[k] = `rewardPosition` is the index of the turn's last assistant token (pos[−1] = −1).
 * - A turn's reward is `envReward + formatPenalty` (environment reward plus the ≤ 0 format penalty);
 *   the trajectory return is the sum over its turns (src/agent/reward.ts, the one definition).
 * - Trajectories with the same `groupId` were played from the same seed (one environment group).
 *   Groups are listed in order of first appearance in the batch; every stage keeps that order.
 * Stages never mutate a batch: they return new arrays and a `metrics` record.
 */
import { trajectoryReturn as returnOfTurns, turnReward } from '../agent/reward.ts';
import { BatchError } from '../errors.ts';

/**
 * A turn as the RL stages read it: the numbers of the rollout's turn (rollout.ts RolloutTurn, same names)
 * and the anchor state. Named apart from the agent's TurnRecord, which is the episode's text-level turn.
 */
export interface BatchTurn {
  /** Environment reward of the turn (sum over the actions it executed). */
  readonly envReward: number;
  /** Format penalty of the turn: 0, or the configured penalty (−0.1) for a dropped/unparsable action. */
  readonly formatPenalty: number;
  /** Index in [0, T) of the turn's last assistant-written token; lossMask must be 1 there. */
  readonly rewardPosition: number;
  /** GiGPO's anchor state: the raw environment observation the agent acted on in this turn (Env.anchor()). */
  readonly observation: string;
  /** Actions the parser extracted from the answer (after truncation to the per-turn budget). */
  readonly actionsProposed: number;
  /** Of those, actions the environment understood. */
  readonly actionsValid: number;
  /** Of those, actions that changed the state. */
  readonly actionsEffective: number;
}

export interface TrajectoryRecord {
  /** Environment group: same seed within a group. */
  readonly groupId: string;
  /** Ended by reaching the goal (never "ran out of budget"). */
  readonly success: boolean;
  readonly turns: readonly BatchTurn[];
}

export interface Batch {
  /** Number of trajectories (rows). */
  readonly B: number;
  /** Padded token length (columns). */
  readonly T: number;
  readonly trajectories: readonly TrajectoryRecord[];
  /** [B, T] 1 on assistant-written tokens. */
  readonly lossMask: Float32Array;
}

/** Sum of the turn rewards (environment rewards plus format penalties). */
export function trajectoryReturn(t: TrajectoryRecord): number {
  return returnOfTurns(t.turns);
}

export { turnReward };

export interface Groups {
  /** Group ids in order of first appearance. */
  readonly ids: readonly string[];
  /** rows[g] = batch row indices of group ids[g], ascending. */
  readonly rows: readonly (readonly number[])[];
}

export function groupRows(trajectories: readonly TrajectoryRecord[]): Groups {
  const index = new Map<string, number[]>();
  trajectories.forEach((t, row) => {
    const rows = index.get(t.groupId);
    if (rows) rows.push(row);
    else index.set(t.groupId, [row]);
  });
  return { ids: [...index.keys()], rows: [...index.values()] };
}

/** Throws BatchError unless `xs` has B·T entries; `name` says which array. */
export function assertTokenShape(name: string, xs: ArrayLike<number>, B: number, T: number): void {
  if (xs.length !== B * T) throw new BatchError(`${name} has ${xs.length} entries, expected B·T = ${B}·${T}`);
}

/** Checks every convention in the module comment; throws BatchError naming the first violation. */
export function validateBatch(batch: Batch): void {
  const { B, T, trajectories, lossMask } = batch;
  if (!Number.isInteger(B) || !Number.isInteger(T) || B < 0 || T < 0) throw new BatchError(`bad shape [${B}, ${T}]`);
  if (trajectories.length !== B) throw new BatchError(`${trajectories.length} trajectories for B = ${B}`);
  assertTokenShape('lossMask', lossMask, B, T);
  for (let i = 0; i < lossMask.length; i++) {
    if (lossMask[i] !== 0 && lossMask[i] !== 1) throw new BatchError(`lossMask[${i}] = ${lossMask[i]} is not 0 or 1`);
  }
  trajectories.forEach((t, b) => validateTurns(batch, b, t));
}

function validateTurns(batch: Batch, b: number, t: TrajectoryRecord): void {
  const { T, lossMask } = batch;
  if (t.turns.length === 0) throw new BatchError(`trajectory ${b} has no turns`);
  let prev = -1;
  t.turns.forEach((turn, k) => {
    const p = turn.rewardPosition;
    const where = `trajectory ${b} turn ${k}`;
    if (!Number.isInteger(p) || p <= prev || p >= T) {
      throw new BatchError(`${where}: rewardPosition ${p} must be an integer in (${prev}, ${T})`);
    }
    if (lossMask[b * T + p] !== 1) throw new BatchError(`${where}: rewardPosition ${p} is not an assistant token`);
    if (!Number.isFinite(turn.envReward) || !Number.isFinite(turn.formatPenalty)) {
      throw new BatchError(`${where}: non-finite reward`);
    }
    prev = p;
  });
  for (let c = prev + 1; c < T; c++) {
    if (lossMask[b * T + c] !== 0) throw new BatchError(`trajectory ${b}: assistant token ${c} after the last turn`);
  }
}

/** For each token of row b: the index of the turn that owns it, or −1 for unmasked tokens. */
export function tokenTurns(batch: Batch, b: number): Int32Array {
  const { T, lossMask } = batch;
  const out = new Int32Array(T).fill(-1);
  let k = 0;
  const turns = batch.trajectories[b].turns;
  for (let c = 0; c < T && k < turns.length; c++) {
    if (lossMask[b * T + c] !== 0) out[c] = k;
    if (c === turns[k].rewardPosition) k++;
  }
  return out;
}

/** Rows [B', cols] of a [B, T] token array, in the given order (the first `cols` columns; default all). */
export function takeRows(xs: ArrayLike<number>, T: number, rows: readonly number[], cols = T): Float32Array {
  const out = new Float32Array(rows.length * cols);
  rows.forEach((r, i) => {
    for (let c = 0; c < cols; c++) out[i * cols + c] = xs[r * T + c];
  });
  return out;
}

/** Row indices of the trajectories whose group is in `groupIds`, ascending. */
export function rowsOfGroups(trajectories: readonly TrajectoryRecord[], groupIds: readonly string[]): number[] {
  const keep = new Set(groupIds);
  const rows: number[] = [];
  trajectories.forEach((t, r) => {
    if (keep.has(t.groupId)) rows.push(r);
  });
  return rows;
}

/** A new batch of the given rows (e.g. the groups a filter kept). */
export function selectRows(batch: Batch, rows: readonly number[]): Batch {
  return {
    B: rows.length,
    T: batch.T,
    trajectories: rows.map((r) => batch.trajectories[r]),
    lossMask: takeRows(batch.lossMask, batch.T, rows),
  };
}

/** JSON form of a batch: the mask as a plain number array, everything else unchanged. */
export interface BatchJSON {
  B: number;
  T: number;
  trajectories: TrajectoryRecord[];
  lossMask: number[];
}

export function batchToJSON(batch: Batch): BatchJSON {
  return {
    B: batch.B,
    T: batch.T,
    trajectories: batch.trajectories.map((t) => ({ ...t, turns: t.turns.map((turn) => ({ ...turn })) })),
    lossMask: Array.from(batch.lossMask),
  };
}

/** Inverse of batchToJSON; validates the result. */
export function batchFromJSON(json: BatchJSON): Batch {
  const lossMask = Float32Array.from(json.lossMask);
  const batch: Batch = { B: json.B, T: json.T, trajectories: json.trajectories, lossMask };
  validateBatch(batch);
  return batch;
}
