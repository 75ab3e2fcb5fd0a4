/**
 * advantage: advantages and value targets of the rows the filter kept, plus the iteration's metrics before
 * the update (rl/iteration.ts advantagesAndMetrics).
 */
import { activity } from '../src/durable/boundary.ts';
import { packArtifact, unpackArtifact } from '../src/durable/artifact-codec.ts';
import { keyOf, loadCollapseProbe, parse, unpackScored } from '../src/durable/batch-io.ts';
import { toWire, type AdvantageActivityInput, type AdvantageResult } from '../src/durable/protocol.ts';
import type { WorkerResources } from '../src/durable/resources.ts';
import { rowsOfGroups } from '../src/rl/batch.ts';
import type { FilterOutput } from '../src/rl/filters.ts';
import { advantagesAndMetrics } from '../src/rl/stages/advantage.ts';
import { keepRows } from '../src/rl/kept-rows.ts';
import type { DynamicSamplingPlan } from '../src/rl/dynamic-sampling.ts';

export function advantageActivity(r: WorkerResources) {
  return activity('advantage', async (input: AdvantageActivityInput): Promise<AdvantageResult> => {
    const c = await r.config(input.run);
    const artifacts = r.artifacts(input.run.storeUri);
    const { trajectories, all } = await r.batch(input.run.storeUri, input.rollout);
    const scored = unpackScored(await artifacts.get(input.scored), input.scored);
    const tokenRewards = unpackArtifact(await artifacts.get(input.rewards), input.rewards).arrays
      .tokenRewards as Float32Array;
    const filtered = parse<FilterOutput>(await artifacts.get(input.kept));
    const samplingMetrics = input.sampling
      ? parse<DynamicSamplingPlan>(await artifacts.get(input.sampling)).metrics
      : {};
    const kept = keepRows(all, rowsOfGroups(all.batch.trajectories, filtered.keptGroupIds));
    const collapse = await loadCollapseProbe(artifacts, input);
    const { adv, metrics } = advantagesAndMetrics(c, input.iteration, {
      trajectories,
      all,
      kept,
      tokenRewards,
      scored,
      filtered,
      samplingMetrics,
      collapse,
    });
    const key = keyOf(input, 'advantage', 'advantages.bin');
    const returns = adv.returns ?? undefined;
    const rows = Int32Array.from(kept.rows);
    await artifacts.put(key, packArtifact({}, { rows, advantages: adv.advantages, returns }));
    return { key, metrics: toWire(metrics) };
  });
}
