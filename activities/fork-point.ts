/**
 * forkPoint (task queue "update"): where onCollapse=fork rewinds to (src/rl/fork-point.ts), from the
 * lineage's chain of starts, which startRun saved per lineage (a parent without a saved start is treated as
 * the root, as replay does).
 */
import { activity } from '../src/durable/boundary.ts';
import { lineageKey } from '../src/durable/artifacts.ts';
import { parse } from '../src/durable/batch-io.ts';
import type { CheckpointRef, ForkPointInput } from '../src/durable/protocol.ts';
import type { WorkerResources } from '../src/durable/resources.ts';
import type { LineageStart } from '../src/events/index.ts';
import { forkPoint } from '../src/rl/fork-point.ts';

/** The chain's starts, oldest first (the order survivingPlan reads a log in). */
async function chainStarts(r: WorkerResources, input: ForkPointInput): Promise<LineageStart[]> {
  const artifacts = r.artifacts(input.run.storeUri);
  const chain: LineageStart[] = [];
  for (let id: string | null = input.run.lineageId; id !== null && !chain.some((l) => l.lineageId === id);) {
    const key = lineageKey(input.run.runId, id);
    const start: LineageStart = (await artifacts.has(key))
      ? parse<LineageStart>(await artifacts.get(key))
      : { lineageId: id, parentLineageId: null, fromIteration: 0 };
    chain.push(start);
    id = start.parentLineageId;
  }
  return chain.reverse();
}

export function forkPointActivity(r: WorkerResources) {
  return activity('forkPoint', async (input: ForkPointInput): Promise<CheckpointRef | null> => {
    const checkpoints = await r.store(input.run.storeUri).store.list(input.run.runId);
    const point = forkPoint(await chainStarts(r, input), checkpoints, input.before);
    return point ? { lineageId: point.lineageId, iteration: point.iteration } : null;
  });
}
