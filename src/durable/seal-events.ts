/**
 * Sealing an iteration's events into the run's store (events/sealed-log.ts), a step of the checkpoint activity
 * after its own append: once the iteration's events are all on Kafka (every append exactly once), they are
 * read back from the run's partition and written as one sealed segment, so the store holds a copy exactly as
 * durable as the checkpoint, event for event the ones Kafka holds. Where to read from comes from the iteration's
 * event fences (event-fence.ts): each records the partition's end before its append wrote, so the lowest of them
 * precedes every event of the iteration. That offset also names the segment: names then sort in log order, the
 * order replay needs (the newest lineage is the one declared last). A lineage's start (its RunEvent, filed under
 * the iteration it continues from) is sealed with its first iteration.
 */
import { eventIteration } from '../events/event-key.ts';
import { createKafkaEventReader } from '../events/kafka-reader.ts';
import { createSealedEventReader, isSealed, sealedName, sealSegment } from '../events/sealed-log.ts';
import type { EventReader, LogPosition, StarpoEvent } from '../events/types.ts';
import { configKey, createArtifactStore, iterationArtifacts, type ArtifactStore } from './artifacts.ts';
import { parse } from './batch-io.ts';
import type { RunRef } from './protocol.ts';

/** The lowest position the iteration's appends (and a lineage start just before it) recorded; 0 when none did. */
async function firstPosition(artifacts: ArtifactStore, run: RunRef, iteration: number): Promise<bigint> {
  const id = { runId: run.runId, lineageId: run.lineageId };
  const keys = [
    ...(await artifacts.keys(`${iterationArtifacts({ ...id, iteration })}events/`, true)),
    ...(iteration > 0
      ? await artifacts.keys(`${iterationArtifacts({ ...id, iteration: iteration - 1 })}events/start/`)
      : []),
  ];
  const offsets = await Promise.all(keys.map(async (k) => BigInt(parse<LogPosition>(await artifacts.get(k)).offset)));
  return offsets.reduce((low, o) => (o < low ? o : low), offsets[0] ?? 0n);
}

/** Whether the event is the lineage's, for this iteration (its RunEvent when the lineage starts just before it). */
function belongs(event: StarpoEvent, run: RunRef, iteration: number): boolean {
  if (event.lineageId !== run.lineageId) return false;
  return eventIteration(event) === (event.kind === 'run' ? iteration - 1 : iteration);
}

/** Seals the lineage's events of `iteration` (idempotent: a sealed segment is left as it is). */
export async function sealIteration(artifacts: ArtifactStore, run: RunRef, iteration: number): Promise<void> {
  const from = await firstPosition(artifacts, run, iteration);
  const name = sealedName(from, run.lineageId, iteration);
  if (await isSealed(artifacts, run.runId, name)) return;
  const reader = createKafkaEventReader({ topic: run.events.topic, brokers: run.events.brokers });
  const events: StarpoEvent[] = [];
  try {
    for await (const e of reader.read(run.runId, { fromOffset: String(from) })) {
      if (belongs(e, run, iteration)) events.push(e);
    }
  } finally {
    await reader.close();
  }
  await sealSegment(artifacts, run.runId, name, events);
}

/** A reader over the sealed segments of the runs in a store (`s3://bucket/prefix/` or `file:///dir`). */
export function createSealedRunReader(storeUri: string): EventReader {
  return createSealedEventReader(createArtifactStore(storeUri), storeUri);
}

/** A run's config.json as the durable client saved it in the store; undefined when there is none. */
export async function sealedRunConfig(storeUri: string, runId: string): Promise<string | undefined> {
  const artifacts = createArtifactStore(storeUri);
  const key = configKey(runId);
  return (await artifacts.has(key)) ? (await artifacts.get(key)).toString('utf8') : undefined;
}
