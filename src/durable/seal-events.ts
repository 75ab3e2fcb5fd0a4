/**
 * Sealing an iteration's events into the run's store (events/sealed-log.ts), a step of the publish activity
 * after its own append: once the iteration's events are all on Kafka (every append exactly once), they are
 * read back from the run's partition and written as one sealed segment, so the store holds a copy exactly as
 * durable as the checkpoint, event for event the ones Kafka holds. Where to read from comes from the iteration's
 * event fences (event-fence.ts): each records the partition's end before its append wrote, so the lowest of them
 * precedes every event of the iteration. That offset also names the segment: names then sort in log order, the
 * order replay needs (the newest lineage is the one declared last). A lineage's start (its RunEvent, filed under
 * the iteration it continues from, with a warm start's checkpoint) is sealed with its first iteration.
 */
import { eventIteration } from '../events/event-key.ts';
import { createKafkaEventReader } from '../events/kafka-reader.ts';
import { isSealed, sealedName, sealSegment } from '../events/sealed-log.ts';
import type { LogPosition, StarpoEvent } from '../events/types.ts';
import { iterationArtifacts, type ArtifactStore } from '../storage/artifacts.ts';
import { parse } from './batch-io.ts';
import type { RunRef } from './protocol.ts';

/**
 * Where the iteration's events start on the partition: the lowest position its appends recorded (0 when none
 * did), and whether the lineage started just before it (its start append, filed under iteration − 1).
 */
async function iterationStart(artifacts: ArtifactStore, run: RunRef, iteration: number) {
  const id = { runId: run.runId, lineageId: run.lineageId };
  const start =
    iteration > 0
      ? await artifacts.keys(`${iterationArtifacts({ ...id, iteration: iteration - 1 })}events/start/`)
      : [];
  const keys = [...(await artifacts.keys(`${iterationArtifacts({ ...id, iteration })}events/`, true)), ...start];
  const offsets = await Promise.all(keys.map(async (k) => BigInt(parse<LogPosition>(await artifacts.get(k)).offset)));
  const from = offsets.reduce((low, o) => (o < low ? o : low), offsets[0] ?? 0n);
  return { from, lineageStarts: start.length > 0 };
}

/**
 * Seals the lineage's events of `iteration`, with those of its start (the RunEvent, a warm start's checkpoint) when
 * the lineage started just before it. Idempotent: a sealed segment is left as it is.
 */
export async function sealIteration(artifacts: ArtifactStore, run: RunRef, iteration: number): Promise<void> {
  const { from, lineageStarts } = await iterationStart(artifacts, run, iteration);
  const name = sealedName(from, run.lineageId, iteration);
  if (await isSealed(artifacts, run.runId, name)) return;
  const belongs = (e: StarpoEvent) =>
    e.lineageId === run.lineageId &&
    (eventIteration(e) === iteration || (lineageStarts && eventIteration(e) === iteration - 1));
  const reader = createKafkaEventReader({ topic: run.events.topic, brokers: run.events.brokers });
  const events: StarpoEvent[] = [];
  try {
    for await (const e of reader.read(run.runId, { fromOffset: String(from) })) if (belongs(e)) events.push(e);
  } finally {
    await reader.close();
  }
  await sealSegment(artifacts, run.runId, name, events);
}
