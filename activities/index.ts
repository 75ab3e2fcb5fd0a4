/**
 * Every activity of the trainingRun workflow, built from the worker's shared resources (stores, event
 * log, model hosts). One file per stage; each is a thin adapter from references to a stage function of
 * src/rl, so every stage stays callable without Temporal.
 */
import type { WorkerResources } from '../src/durable/resources.ts';
import { advantageActivity } from './advantage.ts';
import { publishActivity } from './publish.ts';
import { filterActivity } from './filter.ts';
import { forkPointActivity } from './fork-point.ts';
import { rewardActivity } from './reward.ts';
import { rolloutActivities } from './rollout.ts';
import { samplingActivity } from './sampling.ts';
import { scoreActivity } from './score.ts';
import { startRunActivity } from './start-run.ts';
import { updateActivity } from './update.ts';

/** The rollout queue's activities: rollout shards and validation (CPU workers, one engine each). */
export function createRolloutActivities(r: WorkerResources) {
  return rolloutActivities(r);
}

/** The update queue's activities: all but playing episodes (the GPU worker's queue, which also runs workflows). */
export function createUpdateActivities(r: WorkerResources) {
  return {
    startRun: startRunActivity(r),
    planSampling: samplingActivity(r),
    score: scoreActivity(r),
    reward: rewardActivity(r),
    filter: filterActivity(r),
    advantage: advantageActivity(r),
    update: updateActivity(r),
    publish: publishActivity(r),
    // The same activity under its name before 2026-12-06: workflows started then still schedule it (PUBLISH_ACTIVITY).
    checkpoint: publishActivity(r),
    forkPoint: forkPointActivity(r),
  };
}

/** Every activity, for a worker that serves both queues from one set of resources. */
export function createActivities(r: WorkerResources) {
  return { ...createRolloutActivities(r), ...createUpdateActivities(r) };
}

export type RolloutActivities = ReturnType<typeof createRolloutActivities>;
export type UpdateActivities = ReturnType<typeof createUpdateActivities>;
export type Activities = ReturnType<typeof createActivities>;
