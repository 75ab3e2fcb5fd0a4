/** Which lineage a resume continues from, when the caller does not say. */
import { ConfigError } from '../errors.ts';
import { createCheckpointStore } from '../storage/index.ts';

/** The lineage with a checkpoint at `iteration` whose manifest was written last (the live branch). */
export async function parentLineage(storeUri: string, runId: string, iteration: number): Promise<string> {
  const store = createCheckpointStore(storeUri);
  const all = await store.list(runId);
  const here = all.filter((c) => c.iteration === iteration);
  if (here.length === 0) {
    const kept = [...new Set(all.map((c) => c.iteration))].sort((a, b) => a - b).join(', ') || 'none';
    throw new ConfigError('fromIteration', `run ${runId} has no checkpoint at iteration ${iteration} (kept: ${kept})`);
  }
  let best = { lineageId: here[0].lineageId, at: '' };
  for (const c of here) {
    const { manifest } = await store.load(runId, c.lineageId, iteration, { only: [] });
    if (manifest.createdAt > best.at) best = { lineageId: c.lineageId, at: manifest.createdAt };
  }
  return best.lineageId;
}
