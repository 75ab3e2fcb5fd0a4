/**
 * Trajectory events → the RL Batch the metric code reads, so replay recomputes metrics with the very
 * functions the trainer used (batchMetrics, filterStage) instead of a second implementation.
 *
 * Events carry per-turn token counts, not token ids, so the batch gets a compact token layout: row b
 * holds only the tokens the model wrote, turn after turn (Σ responseTokens ones in the loss mask), each
 * turn's reward on its last token. Every loss-mask row sum — the response length — equals the trainer's,
 * which counted the same model-written tokens inside the full context; prompt and observation tokens,
 * which no trajectory-level metric reads, are left out.
 */
import type { Batch, TrajectoryRecord } from '../rl/batch.ts';
import type { TrajectoryEvent } from '../events/index.ts';

/** Rollout order: group, then rollout index (the order the trainer assembled its batch in). */
export function rolloutOrder(events: readonly TrajectoryEvent[]): TrajectoryEvent[] {
  return [...events].sort((a, b) => a.group - b.group || a.rolloutIndex - b.rolloutIndex);
}

/** Same group id as rl/assemble.ts: `${seed}:${group}`. */
export function trajectoryRecordOf(e: TrajectoryEvent, proposed: readonly number[]): TrajectoryRecord {
  let position = -1;
  return {
    groupId: `${e.envSeed}:${e.group}`,
    success: e.success,
    turns: e.turns.map((t, k) => {
      position += t.responseTokens;
      return {
        envReward: t.envReward,
        formatPenalty: t.formatPenalty,
        rewardPosition: position,
        observation: t.observation,
        actionsProposed: proposed[k] ?? t.actionsValid,
        actionsValid: t.actionsValid,
        actionsEffective: t.actionsEffective,
      };
    }),
  };
}

/** The batch of the records, with the compact layout of the module comment. */
export function compactBatch(events: readonly TrajectoryEvent[], records: readonly TrajectoryRecord[]): Batch {
  const lengths = events.map((e) => e.turns.reduce((n, t) => n + t.responseTokens, 0));
  const T = Math.max(2, ...lengths);
  const lossMask = new Float32Array(events.length * T);
  lengths.forEach((n, b) => lossMask.fill(1, b * T, b * T + n));
  return { B: events.length, T, trajectories: records, lossMask };
}
