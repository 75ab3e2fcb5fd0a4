/**
 * planSampling (DAPO dynamic sampling, pure): after each sampling round, whether the iteration has enough
 * groups whose returns differ, or how many more groups to play (rl/iteration.ts samplingPlan). The workflow
 * loops on it with rl/sampling-rounds.ts, the loop of the embedded driver's sampleGroups.
 */
import { activity } from '../src/durable/boundary.ts';
import { json, keyOf, loadTrajectories } from '../src/durable/batch-io.ts';
import type { SamplingPlanInput, SamplingPlanResult } from '../src/durable/protocol.ts';
import type { WorkerResources } from '../src/durable/resources.ts';
import { samplingPlan } from '../src/rl/stages/rollout.ts';

export function samplingActivity(r: WorkerResources) {
  return activity('planSampling', async (input: SamplingPlanInput): Promise<SamplingPlanResult> => {
    const c = await r.config(input.run);
    const artifacts = r.artifacts(input.run.storeUri);
    const trajectories = await loadTrajectories(artifacts, input.rollout);
    const plan = samplingPlan(c, trajectories, input.tries);
    const key = keyOf(input, 'sampling', `plan-${input.tries}.json`);
    await artifacts.put(key, json(plan));
    return { key, action: plan.action, groupsNeeded: plan.groupsNeeded };
  });
}
