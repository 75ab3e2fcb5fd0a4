/** The validation stage: the fixed validation seeds, played by the driver's episode source. The `validate` activity. */
import { assemble } from '../assemble.ts';
import type { RlConfig } from '../config.ts';
import { batchMetrics } from '../metrics.ts';
import type { Trajectory } from '../rollout.ts';
import { VALIDATION_SAMPLING_SEED, validationSeeds } from '../seeds.ts';
import { toolMetricsOf, toolOutcomeOf } from '../tool-use.ts';
import type { EpisodeSource } from '../episode-source.ts';
import { valMetric } from '../metric-names.ts';

/** Validation: every fixed seed played `samples` times at the validation temperature; success and pass@k. */
export async function runValidation(
  c: RlConfig,
  episodes: EpisodeSource,
  samples = 1,
): Promise<{ trajectories: Trajectory[]; metrics: Record<string, number> }> {
  const seeds = validationSeeds(c);
  const trajectories = await episodes({
    seeds,
    groupIds: seeds.map((_, g) => g),
    groupSize: samples,
    temperature: c.valTemperature,
    samplingSeed: VALIDATION_SAMPLING_SEED,
    split: 'val',
    iteration: 0,
  });
  const { batch } = assemble(trajectories);
  const m = {
    ...batchMetrics({ batch, passK: [...new Set([1, samples])] }),
    ...toolMetricsOf(c, trajectories.map(toolOutcomeOf)),
  };
  return { trajectories, metrics: Object.fromEntries(Object.entries(m).map(([k, v]) => [valMetric(k), v])) };
}
