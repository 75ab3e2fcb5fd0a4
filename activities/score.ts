/**
 * score (task queue "update"): old log-probs (actor), values (critic) and reference log-probs of the rows
 * the filter keeps, under the policy the rollout used. It runs beside the filter activity and derives the
 * same kept rows itself (the filter is a pure function of the trajectories and the sampling plan). When due,
 * also RAGEN-2's collapse probe with the same actor, kept as a small artifact the advantage and checkpoint
 * stages read (collapseProbeKey).
 */
import { activity } from '../src/durable/boundary.ts';
import { collapseProbeKey, json, keyOf, packScored, parse, policyId } from '../src/durable/batch-io.ts';
import type { ArtifactResult, FilterActivityInput } from '../src/durable/protocol.ts';
import type { DynamicSamplingPlan } from '../src/rl/dynamic-sampling.ts';
import type { WorkerResources } from '../src/durable/resources.ts';
import { trainedRows } from '../src/rl/stages/filter.ts';
import { collapseStage } from '../src/rl/stages/score.ts';
import { scoreStage } from '../src/rl/stages/score.ts';

export function scoreActivity(r: WorkerResources) {
  return activity('score', async (input: FilterActivityInput): Promise<ArtifactResult> => {
    const c = await r.config(input.run);
    const artifacts = r.artifacts(input.run.storeUri);
    const { trajectories, all } = await r.batch(input.run.storeUri, input.rollout);
    const informative = input.sampling
      ? parse<DynamicSamplingPlan>(await artifacts.get(input.sampling)).keptGroupIds
      : undefined;
    const rows = trainedRows(c, all.batch, informative);
    const [scored, probe] = await r.trainModels.use(c, r.store(input.run.storeUri), policyId(input), async (m) => {
      const out = await scoreStage(c, all, rows, m);
      return [out, await collapseStage(c, input.iteration, trajectories, m.actor)] as const;
    });
    const key = keyOf(input, 'score', 'scored.bin');
    await artifacts.put(key, packScored(scored));
    if (probe) await artifacts.put(collapseProbeKey(input), json(probe));
    return { key };
  });
}
