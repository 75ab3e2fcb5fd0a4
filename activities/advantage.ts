/**
 * advantage: advantages and value targets of the rows the filter kept, plus the iteration's batch
 * metrics — composed exactly as rl/iteration.ts runIteration composes them, so the durable and the
 * embedded driver report the same numbers.
 */
import { activity } from '../src/durable/boundary.ts';
import { packArtifact, unpackArtifact } from '../src/durable/artifact-codec.ts';
import { keyOf, loadCollapseProbe, parse, unpackScored } from '../src/durable/batch-io.ts';
import { toWire, type AdvantageInput, type AdvantageResult } from '../src/durable/protocol.ts';
import type { WorkerResources } from '../src/durable/resources.ts';
import { rowsOfGroups, selectRows, takeRows } from '../src/rl/batch.ts';
import type { FilterOutput } from '../src/rl/filters.ts';
import { advantageStage, iterationMetrics, scheduleMetrics } from '../src/rl/iteration.ts';
import type { DynamicSamplingPlan } from '../src/rl/dynamic-sampling.ts';

export function advantageActivity(r: WorkerResources) {
  return activity('advantage', async (input: AdvantageInput): Promise<AdvantageResult> => {
    const c = await r.config(input.run);
    const artifacts = r.artifacts(input.run.storeUri);
    const { trajectories, all } = await r.batch(input.run.storeUri, input.rollout);
    const scored = unpackScored(await artifacts.get(input.scored), input.scored);
    const tokenRewards = unpackArtifact(await artifacts.get(input.rewards), input.rewards).arrays.tokenRewards as Float32Array;
    const filtered = parse<FilterOutput>(await artifacts.get(input.kept));
    const sampled = input.sampling ? parse<DynamicSamplingPlan>(await artifacts.get(input.sampling)).metrics : {};
    const rows = rowsOfGroups(all.batch.trajectories, filtered.keptGroupIds);
    const T = all.batch.T;
    const batch = selectRows(all.batch, rows);
    const { values } = scored; // the kept rows' already
    const logprobs = { old: scored.logprobs, behaviour: takeRows(all.samplingLogprobs, T, rows) };
    const adv = advantageStage(c, batch, takeRows(tokenRewards, T, rows), values, logprobs);
    const collapse = await loadCollapseProbe(artifacts, input);
    const metrics = iterationMetrics({ c, trajectories, all, kept: batch, keptGroupIds: filtered.keptGroupIds,
      values, adv, stageMetrics: [sampled, filtered.metrics, scored.metrics, scheduleMetrics(c, input.iteration)], collapse });
    const key = keyOf(input, 'advantage', 'advantages.bin');
    const returns = adv.returns ?? undefined;
    await artifacts.put(key, packArtifact({}, { rows: Int32Array.from(rows), advantages: adv.advantages, returns }));
    return { key, metrics: toWire(metrics) };
  });
}
