/**
 * planSampling (DAPO dynamic sampling, pure): after each sampling round, whether the iteration has enough
 * groups whose returns differ, or how many more groups to play. The workflow loops on it as the embedded
 * driver's sampleGroups does.
 */
import { activity } from '../src/durable/boundary.ts';
import { json, keyOf, loadTrajectories } from '../src/durable/batch-io.ts';
import type { SamplingPlanInput, SamplingPlanResult } from '../src/durable/protocol.ts';
import type { WorkerResources } from '../src/durable/resources.ts';
import { trajectoryRecord } from '../src/rl/assemble.ts';
import { planDynamicSampling } from '../src/rl/dynamic-sampling.ts';

export function samplingActivity(r: WorkerResources) {
  return activity('planSampling', async (input: SamplingPlanInput): Promise<SamplingPlanResult> => {
    const c = await r.config(input.run);
    const artifacts = r.artifacts(input.run.storeUri);
    const trajectories = await loadTrajectories(artifacts, input.rollout);
    const plan = planDynamicSampling({
      trajectories: trajectories.map(trajectoryRecord), targetGroups: c.envGroups, tries: input.tries, maxTries: c.dynamicSamplingMaxTries,
    });
    const key = keyOf(input, 'sampling', `plan-${input.tries}.json`);
    await artifacts.put(key, json(plan));
    return { key, action: plan.action, groupsNeeded: plan.groupsNeeded };
  });
}
