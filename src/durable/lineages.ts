/**
 * The lineages' starts as startRun saved them beside the artifacts (one JSON per lineage; the run's event log is
 * Kafka's, too far to read back from an activity). The fork-point activity walks a lineage's chain in them, and
 * retention keeps the checkpoints they start from, as the embedded driver's does from its log.
 */
import type { LineageStart } from '../events/index.ts';
import { forkPoints } from '../events/lineage.ts';
import { withoutForkPoints } from '../run/resume-plan.ts';
import type { CheckpointId, CheckpointStore } from '../storage/index.ts';
import { lineagesFolder, type ArtifactStore } from '../storage/artifacts.ts';
import { parse } from './batch-io.ts';
import { log } from '../log.ts';

/** Every saved start of the run; a damaged record is skipped with a warning, as replay skips a damaged RunEvent. */
export async function savedLineageStarts(artifacts: ArtifactStore, runId: string): Promise<LineageStart[]> {
  const keys = (await artifacts.keys(lineagesFolder(runId))).filter((k) => k.endsWith('.json'));
  const starts = await Promise.all(
    keys.map(async (key) => {
      const bytes = await artifacts.get(key);
      try {
        const start = parse<LineageStart>(bytes);
        if (typeof start?.lineageId === 'string' && Number.isSafeInteger(start.fromIteration)) return [start];
      } catch {
        // reported below
      }
      log.warn({ key }, 'lineage start record is damaged; skipped (its fork point is not protected from retention)');
      return [];
    }),
  );
  return starts.flat();
}

/** `lineageId`'s chain of starts, oldest first; a parent without a saved start counts as the root, as in replay. */
export function chainOf(starts: readonly LineageStart[], lineageId: string): LineageStart[] {
  const byId = new Map(starts.map((s) => [s.lineageId, s]));
  const chain: LineageStart[] = [];
  for (let id: string | null = lineageId; id !== null && !chain.some((l) => l.lineageId === id);) {
    const start: LineageStart = byId.get(id) ?? { lineageId: id, parentLineageId: null, fromIteration: 0 };
    chain.push(start);
    id = start.parentLineageId;
  }
  return chain.reverse();
}

/**
 * The store as retention must see it: without the checkpoints any saved lineage started from, nor `kept` (the
 * reference checkpoint, run/checkpoint.ts keptForReference).
 */
export async function retentionView(
  store: CheckpointStore,
  artifacts: ArtifactStore,
  runId: string,
  kept: readonly CheckpointId[] = [],
): Promise<CheckpointStore> {
  return withoutForkPoints(store, [...forkPoints(runId, await savedLineageStarts(artifacts, runId)), ...kept]);
}
