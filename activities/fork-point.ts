/**
 * forkPoint (task queue "update"): where onCollapse=fork rewinds to (src/run/fork-point.ts), from the
 * lineage's chain of starts, which startRun saved per lineage (src/durable/lineages.ts).
 */
import { activity } from '../src/durable/boundary.ts';
import { chainOf, savedLineageStarts } from '../src/durable/lineages.ts';
import type { ForkPointInput } from '../src/durable/protocol.ts';
import type { CheckpointRef } from '../src/run/checkpoint.ts';
import type { WorkerResources } from '../src/durable/resources.ts';
import { forkPoint } from '../src/run/fork-point.ts';

export function forkPointActivity(r: WorkerResources) {
  return activity('forkPoint', async (input: ForkPointInput): Promise<CheckpointRef | null> => {
    const checkpoints = await r.store(input.run.storeUri).store.list(input.run.runId);
    const starts = await savedLineageStarts(r.artifacts(input.run.storeUri), input.run.runId);
    const point = forkPoint(chainOf(starts, input.run.lineageId), checkpoints, input.before);
    return point ? { lineageId: point.lineageId, iteration: point.iteration } : null;
  });
}
