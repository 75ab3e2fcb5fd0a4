/**
 * filter (StarPO-S and neighbours): which groups of the iteration's batch are trained on (pure). With DAPO
 * dynamic sampling the planner's informative groups come first and the configured filter chooses among them.
 */
import { activity } from '../src/durable/boundary.ts';
import { json, keyOf, parse } from '../src/durable/batch-io.ts';
import type { ArtifactResult, FilterActivityInput } from '../src/durable/protocol.ts';
import type { DynamicSamplingPlan } from '../src/rl/dynamic-sampling.ts';
import type { WorkerResources } from '../src/durable/resources.ts';
import { filterStage } from '../src/rl/stages/filter.ts';

export function filterActivity(r: WorkerResources) {
  return activity('filter', async (input: FilterActivityInput): Promise<ArtifactResult> => {
    const c = await r.config(input.run);
    const artifacts = r.artifacts(input.run.storeUri);
    const { all } = await r.batch(input.run.storeUri, input.rollout);
    const key = keyOf(input, 'filter', 'kept.json');
    const informative = input.sampling
      ? parse<DynamicSamplingPlan>(await artifacts.get(input.sampling)).keptGroupIds
      : undefined;
    await artifacts.put(key, json(filterStage(c, all.batch, informative)));
    return { key };
  });
}
