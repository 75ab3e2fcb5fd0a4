/**
 * Every activity of the trainingRun workflow, built from the worker's shared resources (stores, event
 * log, model hosts). One file per stage; each is a thin adapter from references to a stage function of
 * src/rl, so every stage stays callable without Temporal.
 */
import type { WorkerResources } from '../src/durable/resources.ts';
import { advantageActivity } from './advantage.ts';
import { checkpointActivity } from './checkpoint.ts';
import { filterActivity } from './filter.ts';
import { forkPointActivity } from './fork-point.ts';
import { rewardActivity } from './reward.ts';
import { rolloutActivities } from './rollout.ts';
import { samplingActivity } from './sampling.ts';
import { scoreActivity } from './score.ts';
import { startRunActivity } from './start-run.ts';
import { updateActivity } from './update.ts';

export function createActivities(r: WorkerResources) {
  return {
    startRun: startRunActivity(r),
    ...rolloutActivities(r),
    planSampling: samplingActivity(r),
    score: scoreActivity(r),
    reward: rewardActivity(r),
    filter: filterActivity(r),
    advantage: advantageActivity(r),
    update: updateActivity(r),
    checkpoint: checkpointActivity(r),
    forkPoint: forkPointActivity(r),
  };
}

export type Activities = ReturnType<typeof createActivities>;
