/**
 * One training iteration as a chain of activities, passing artifact keys only:
 *   rollout shards [─► planSampling ─► more shards …] ─► score ‖ reward ‖ filter ─► advantage
 *   ─► update (writes checkpoint i) ─► [validate] ─► publish
 * The rollout comes from the RolloutSchedule: played here, or already under way (asynchronous runs, and
 * pipelined ones, which start rollout i + 1 as soon as the update wrote checkpoint i). A pipelined run
 * publishes iteration i (validate, publish) beside iteration i + 1.
 * Score, reward and filter read only the trajectories (and the sampling plan), so they run side by side;
 * score derives the filter's kept rows itself and scores only those.
 */
import { patched } from '@temporalio/workflow';
import type { RunPlan, Stage, TrainingRunInput, UpdateResult, WireMetrics } from '../src/durable/protocol.ts';
import type { CheckpointRef } from '../src/run/checkpoint.ts';
import { validatesAt } from '../src/rl/val-schedule.ts';
import type { Stages } from './activities.ts';
import type { RolloutSchedule } from './rollout-schedule.ts';

export interface IterationOutcome {
  checkpoint: CheckpointRef;
  metrics: WireMetrics;
  warning: string | null;
  /** The stop or fork onCollapse calls for after this iteration's warning; null otherwise. */
  collapse: UpdateResult['collapse'];
  ms: number;
}

/** An iteration trained up to its checkpoint; what is left is to publish it. */
export interface TrainedIteration {
  checkpoint: CheckpointRef;
  /** The stop or fork onCollapse calls for after this iteration's warning; null otherwise. */
  collapse: UpdateResult['collapse'];
  /**
   * Validation of the new policy (when due) and the publish activity (events, retention, artifacts):
   * the iteration's outcome once done. `track`: report these stages as the run's progress (false when they
   * run beside the next iteration).
   */
  publish(track: boolean): Promise<IterationOutcome>;
}

/**
 * Patch marker: the activity that publishes an iteration is `publish`; histories from before it schedule the same
 * activity under its old name, `checkpoint` (the update writes the checkpoint; this one publishes it).
 */
export const PUBLISH_ACTIVITY = 'publish-activity';

type StageTimer = <T>(name: Stage, fn: () => Promise<T>, track?: boolean) => Promise<T>;

/** `policy`: checkpoint i − 1, which score and update read; the rollout comes from `rollouts` (its own version). */
export async function runIteration(
  a: Stages,
  input: TrainingRunInput,
  plan: RunPlan,
  iteration: number,
  policy: CheckpointRef,
  enter: (stage: Stage) => void,
  rollouts: RolloutSchedule,
): Promise<TrainedIteration> {
  const startedAtMs = Date.now(); // workflow time: deterministic on replay
  const timingsMs: Record<string, number> = {};
  const stage: StageTimer = async (name, fn, track = true) => {
    if (track) enter(name);
    const t0 = Date.now();
    try {
      return await fn();
    } finally {
      timingsMs[name] = Date.now() - t0;
    }
  };
  const { run } = input;
  const base = { run, iteration, policy };
  const { rollout, sampling, ms: playedMs } = await stage('rollout', () => rollouts.take(iteration));
  if (plan.asyncStaleness) timingsMs.rollout_play = playedMs; // beside the wait for it ('rollout')
  const batch = { ...base, rollout };
  const [scored, rewards, kept] = await stage('score', () =>
    Promise.all([
      a.update.score({ ...batch, sampling }),
      a.update.reward(batch),
      a.update.filter({ ...batch, sampling }),
    ]),
  );
  const adv = await stage('advantage', () =>
    a.update.advantage({ ...batch, scored: scored.key, rewards: rewards.key, kept: kept.key, sampling }),
  );
  const behaviourPolicies = rollouts.pendingAt(iteration);
  const updated = await stage('update', () =>
    a.update.update({
      ...batch,
      scored: scored.key,
      advantage: adv.key,
      metrics: adv.metrics,
      ...(behaviourPolicies && { behaviourPolicies }),
    }),
  );
  rollouts.published(updated.checkpoint);
  const collapse = updated.collapse ?? null;
  const publish = async (track: boolean): Promise<IterationOutcome> => {
    const val = validatesAt(plan, iteration)
      ? await stage('validate', () => a.rollout.validate({ run, iteration, policy: updated.checkpoint }), track)
      : null;
    const metrics = { ...updated.metrics, ...val?.metrics };
    const publishActivity = patched(PUBLISH_ACTIVITY) ? a.update.publish : a.update.checkpoint;
    await stage(
      'publish',
      () =>
        publishActivity({
          run,
          iteration,
          checkpoint: updated.checkpoint,
          metrics,
          timingsMs: { ...timingsMs },
          warning: updated.warning,
          startedAtMs,
          keepArtifacts: input.options.keepArtifacts,
        }),
      track,
    );
    return {
      checkpoint: updated.checkpoint,
      metrics,
      warning: updated.warning?.message ?? null,
      collapse,
      ms: Date.now() - startedAtMs,
    };
  };
  return { checkpoint: updated.checkpoint, collapse, publish };
}
