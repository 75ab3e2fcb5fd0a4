/** reward: the token-level reward tensor [B, T] of the iteration's batch (pure; no model). */
import { activity } from '../src/durable/boundary.ts';
import { packArtifact } from '../src/durable/artifact-codec.ts';
import { keyOf } from '../src/durable/batch-io.ts';
import type { ArtifactResult, BatchInput } from '../src/durable/protocol.ts';
import type { WorkerResources } from '../src/durable/resources.ts';
import { placeRewards } from '../src/rl/reward.ts';

export function rewardActivity(r: WorkerResources) {
  return activity('reward', async (input: BatchInput): Promise<ArtifactResult> => {
    const c = await r.config(input.run);
    const artifacts = r.artifacts(input.run.storeUri);
    const { all } = await r.batch(input.run.storeUri, input.rollout);
    const { tokenRewards, metrics } = placeRewards({ batch: all.batch, placement: c.rewardPlacement });
    const key = keyOf(input, 'reward', 'rewards.bin');
    await artifacts.put(key, packArtifact({ metrics }, { tokenRewards }));
    return { key };
  });
}
