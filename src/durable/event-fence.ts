/**
 * The fences of the durable driver's event appends (exactly once on Kafka, src/events/kafka-log.ts), kept in the
 * run's artifact store beside the iteration's artifacts: one folder per append, one small record per attempt
 * that got as far as writing. The publish activity's clean-up leaves them (they are not a bulky stage), so a
 * retry long after still finds them.
 */
import { randomUUID } from 'node:crypto';
import { CorruptDataError } from '../errors.ts';
import type { AppendFence, LogPosition, StarpoEvent } from '../events/index.ts';
import { DEFAULT_TOPIC } from '../events/kafka-common.ts';
import { iterationArtifacts, type ArtifactId, type ArtifactStore } from '../storage/artifacts.ts';
import { json, parse } from './batch-io.ts';
import type { RunRef } from './protocol.ts';
import type { WorkerResources } from './resources.ts';

/** The folder of an append's fence: `<run>/artifacts/<lineage>/<iteration>/events/<append>/`. */
export function fenceFolder(id: ArtifactId, append: string): string {
  return `${iterationArtifacts(id)}events/${append}/`;
}

/**
 * The fence of one append of a run's lineage and iteration (`append` names it within the iteration, e.g. a
 * rollout chunk). The transactional id carries the topic, since ids are unique per Kafka cluster.
 */
export function appendFence(artifacts: ArtifactStore, topic: string, id: ArtifactId, append: string): AppendFence {
  const folder = fenceFolder(id, append);
  return {
    id: `starpo:${topic}:${id.runId}:${id.lineageId}:${id.iteration}:${append}`,
    async read() {
      const positions = await Promise.all(
        (await artifacts.keys(folder)).map(async (key) => checked(parse<LogPosition>(await artifacts.get(key)), key)),
      );
      return positions.reduce<LogPosition | undefined>(
        (low, p) => (low === undefined || BigInt(p.offset) < BigInt(low.offset) ? p : low),
        undefined,
      );
    },
    // A key per attempt: a slow attempt's record lands beside a later one's instead of replacing it.
    write: (position) => artifacts.put(`${folder}${randomUUID()}.json`, json(position)),
  };
}

function checked(p: LogPosition, key: string): LogPosition {
  if (!Number.isInteger(p?.partition) || typeof p?.offset !== 'string' || !/^\d+$/.test(p.offset)) {
    throw new CorruptDataError(`event fence ${key}: not a log position (${JSON.stringify(p)})`);
  }
  return p;
}

/** Appends a lineage's events for `iteration` exactly once however often the calling activity is retried. */
export async function appendExactlyOnce(
  r: Pick<WorkerResources, 'artifacts' | 'events'>,
  run: RunRef,
  iteration: number,
  append: string,
  events: readonly StarpoEvent[],
): Promise<void> {
  const id = { runId: run.runId, lineageId: run.lineageId, iteration };
  const fence = appendFence(r.artifacts(run.storeUri), run.events.topic ?? DEFAULT_TOPIC, id, append);
  await r.events(run.events).appendOnce(events, fence);
}
