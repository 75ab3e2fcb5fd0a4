/**
 * score (task queue "update"): old log-probs and entropy (actor), values (critic) and reference
 * log-probs of every token of the iteration's batch, under the policy the rollout used.
 */
import { activity } from '../src/durable/boundary.ts';
import { keyOf, loadBatch, packScored, policyId } from '../src/durable/batch-io.ts';
import { asPolicy } from '../src/durable/model-host.ts';
import type { ArtifactResult, BatchInput } from '../src/durable/protocol.ts';
import type { WorkerResources } from '../src/durable/resources.ts';
import { scoreStage } from '../src/rl/iteration.ts';

export function scoreActivity(r: WorkerResources) {
  return activity('score', async (input: BatchInput): Promise<ArtifactResult> => {
    const c = await r.config(input.run);
    const artifacts = r.artifacts(input.run.storeUri);
    const { all } = await loadBatch(artifacts, input.rollout);
    const scored = await r.trainModels.use(c, r.store(input.run.storeUri), policyId(input), (m) => scoreStage(c, all.tokens, {
      actor: asPolicy(m.actor), critic: m.critic && asPolicy(m.critic), ref: m.ref && asPolicy(m.ref),
    }));
    const key = keyOf(input, 'score', 'scored.bin');
    await artifacts.put(key, packScored(scored));
    return { key };
  });
}
