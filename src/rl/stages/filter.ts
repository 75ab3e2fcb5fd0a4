/** The filter stage: which groups (and so which rows) an iteration trains. The durable driver's `filter` activity. */
import { type Batch, rowsOfGroups } from '../batch.ts';
import type { RlConfig } from '../config.ts';
import { FILTERS, type FilterOutput } from '../filters.ts';

/** The rows (indices into the batch, ascending) of the groups the filter keeps: the rows scored and trained. */
export function trainedRows(c: RlConfig, batch: Batch, informative?: readonly string[]): number[] {
  return rowsOfGroups(batch.trajectories, filterStage(c, batch, informative).keptGroupIds);
}

/**
 * Stage: which groups to train on (pure). With DAPO dynamic sampling, `informative` (the planner's
 * kept groups) is applied first and the configured filter then chooses among those.
 */
export function filterStage(c: RlConfig, batch: Batch, informative?: readonly string[]): FilterOutput {
  const keep = informative && new Set(informative);
  return FILTERS[c.filter]({
    trajectories: keep ? batch.trajectories.filter((t) => keep.has(t.groupId)) : batch.trajectories,
    params: {
      fraction: c.filterFraction,
      band: [c.filterBandLow, c.filterBandHigh],
      topP: c.filterTopP,
      topPEps: c.filterTopPEps,
    },
  });
}
