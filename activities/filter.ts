/** filter (StarPO-S and neighbours): which groups of the iteration's batch are trained on (pure). */
import { activity } from '../src/durable/boundary.ts';
import { json, keyOf, loadBatch } from '../src/durable/batch-io.ts';
import type { ArtifactResult, BatchInput } from '../src/durable/protocol.ts';
import type { WorkerResources } from '../src/durable/resources.ts';
import { filterStage } from '../src/rl/iteration.ts';

export function filterActivity(r: WorkerResources) {
  return activity('filter', async (input: BatchInput): Promise<ArtifactResult> => {
    const c = await r.config(input.run);
    const artifacts = r.artifacts(input.run.storeUri);
    const { all } = await loadBatch(artifacts, input.rollout);
    const key = keyOf(input, 'filter', 'kept.json');
    await artifacts.put(key, json(filterStage(c, all.batch)));
    return { key };
  });
}
