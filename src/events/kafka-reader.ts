/**
 * Reads one run's events back from the Kafka topic. kafkajs has no manual partition assignment, so each
 * read joins a throw-away consumer group (no offsets committed), consumes the run's partition from the
 * beginning (or `fromOffset`) and stops at the end offset captured when the read started: a read is a
 * snapshot, not a tail. Only committed records are read (a transaction still open holds the read back
 * until it ends; an aborted one is skipped). Records of other runs are skipped by key. A record of this
 * run whose value fails its payload digest, whose schema is unknown or that does not decode is damage,
 * named by partition and offset: the read fails, or with `allowPartial` ends there (problems.ts). Records
 * written before the digest header existed are read as they are, with one note that they are not
 * tamper-evident. A consumer kafkajs restarts after a transient failure (the broker restarting) rejoins
 * where the read was and goes on; the read fails when no record arrives for `idleTimeoutMs`.
 */
import { randomUUID } from 'node:crypto';
import type { EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import { CorruptDataError, StarpoError } from '../errors.ts';
import { log } from '../log.ts';
import { AsyncQueue } from './async-queue.ts';
import { decodeEvent } from './codec.ts';
import {
  createKafka,
  DEFAULT_TOPIC,
  FINGERPRINT_HEADER,
  PAYLOAD_DIGEST_HEADER,
  partitionFor,
  type KafkaConnectionOptions,
} from './kafka-common.ts';
import { problemHandler, type AfterProblem } from './problems.ts';
import { digest } from './segment-index.ts';
import { schemaRegistry } from './schemas.ts';
import type { EventReader, ReadOptions, ReadProblem, StarpoEvent } from './types.ts';

export interface KafkaEventReaderOptions extends KafkaConnectionOptions {
  /** A read fails (retryably) when no record arrives for this long while the end is not reached. Default 30 s. */
  idleTimeoutMs?: number;
}

export interface KafkaReadOptions extends ReadOptions {
  /** Read the run's partition from this offset instead of its beginning (an exactly-once append's scan). */
  fromOffset?: string;
}

/** The run's partition and the offsets to read it between; undefined when there is nothing to read. */
type Range = { partition: number; start: bigint; end: bigint };

async function snapshot(kafka: Kafka, topic: string, runId: string, from?: string): Promise<Range | undefined> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const topics = await admin.listTopics();
    if (!topics.includes(topic)) return undefined;
    const offsets = await admin.fetchTopicOffsets(topic);
    const partition = partitionFor(topic, runId, offsets.length);
    const { low, high } = offsets.find((o) => o.partition === partition)!;
    const start = from === undefined || BigInt(from) < BigInt(low) ? BigInt(low) : BigInt(from);
    return BigInt(high) > start ? { partition, start, end: BigInt(high) } : undefined;
  } finally {
    await admin.disconnect();
  }
}

/** The message's event, or a problem report when it cannot be decoded. */
type Position = Pick<ReadProblem, 'partition' | 'offset' | 'where'>;

function decodeMessage(message: KafkaMessage, where: Position): StarpoEvent | ReadProblem {
  const fingerprint = message.headers?.[FINGERPRINT_HEADER]?.toString();
  const writer = fingerprint === undefined ? undefined : schemaRegistry().byFingerprint(fingerprint);
  if (writer === undefined) {
    const text = `no known schema has fingerprint ${fingerprint ?? '(missing header)'}`;
    return { kind: 'unknown-schema', message: text, ...where };
  }
  if (message.value === null) return { kind: 'undecodable', message: 'record has no value', ...where };
  const sent = message.headers?.[PAYLOAD_DIGEST_HEADER]?.toString();
  if (sent !== undefined && sent !== digest(message.value, 64)) {
    const text = `the ${message.value.length}-byte value does not match its digest`;
    return { kind: 'digest-mismatch', message: text, ...where };
  }
  try {
    return decodeEvent(message.value, writer.type);
  } catch (err) {
    if (!(err instanceof CorruptDataError)) throw err;
    return { kind: 'undecodable', message: err.message, ...where };
  }
}

export class KafkaEventReader implements EventReader {
  private readonly kafka: Kafka;
  private readonly topic: string;

  constructor(private readonly options: KafkaEventReaderOptions) {
    this.kafka = createKafka(options);
    this.topic = options.topic ?? DEFAULT_TOPIC;
  }

  async *read(runId: string, options?: KafkaReadOptions): AsyncGenerator<StarpoEvent> {
    const range = await snapshot(this.kafka, this.topic, runId, options?.fromOffset);
    if (range === undefined) return;
    const queue = new AsyncQueue<StarpoEvent>(1024);
    // A short fetch wait: disconnect waits for the in-flight long poll, and a read ends with one. A short session:
    // after a broker restart the group waits out the member that crashed before the restarted one may join
    // (kafkajs's default 30 s outlasted the watchdog; brokers accept 6 s and up by default); the handler heartbeats
    // while a slow reader keeps the queue full.
    const consumer = this.kafka.consumer({
      groupId: `starpo-reader-${randomUUID()}`,
      allowAutoTopicCreation: false,
      maxWaitTimeInMs: 100,
      sessionTimeout: SESSION_TIMEOUT_MS,
      heartbeatInterval: SESSION_TIMEOUT_MS / 3,
    });
    const watchdog = this.watchdog(queue, runId);
    // The first offset not yet delivered (or passed over: another run's), and the records fetched again below it.
    const position = { next: range.start, refetched: 0 };
    let over = false;
    // A restart already under way when the read ends outlives the disconnect below: stop it when it shows (after
    // the crash handler's caller has set its restart timer, hence setImmediate).
    const stopLate = (): void => {
      if (over) setImmediate(() => void consumer.disconnect().catch(() => undefined));
    };
    try {
      await consumer.connect();
      await consumer.subscribe({ topic: this.topic, fromBeginning: true });
      // A crash kafkajs restarts from (retries spent on a transient error: a broker restarting, a coordinator
      // still loading) rejoins, and the join below seeks to where the read was; the watchdog still fails a read
      // that stops progressing. Any other crash fails the read.
      consumer.on(consumer.events.CRASH, ({ payload }) => {
        if (over) stopLate();
        else if (payload.restart)
          log.warn({ runId, topic: this.topic, err: payload.error.message }, 'kafka reader restarts');
        else queue.fail(this.failure(runId, payload.error));
      });
      // Every join starts where the read is: the throw-away group commits no offset, so a member would otherwise
      // fetch from the partition's beginning (after a restart, everything delivered and every other run's record
      // again). The handler still passes over a record below `next` fetched before a seek took effect.
      consumer.on(consumer.events.GROUP_JOIN, () => {
        if (over) return stopLate();
        consumer.seek({ topic: this.topic, partition: range.partition, offset: `${position.next}` });
      });
      // Transaction markers are records no handler sees: a partition that ends in one ends after its batch.
      consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
        if (payload.partition !== range.partition) return;
        watchdog.touch();
        if (BigInt(payload.lastOffset) + 1n >= range.end) queue.end();
      });
      const onBatch = this.batchHandler(runId, range, position, queue, problemHandler(options), watchdog.touch);
      await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch: onBatch });
      yield* queue;
    } finally {
      over = true;
      watchdog.stop();
      queue.cancel(); // releases a consumer callback blocked on a full queue, or disconnect would wait on it
      await consumer.disconnect();
      log.debug({ runId, topic: this.topic, refetched: position.refetched }, 'kafka read ended');
    }
  }

  /** Handles one fetched batch: other partitions are paused, this one is read up to the snapshot's end. */
  private batchHandler(
    runId: string,
    range: Range,
    position: { next: bigint; refetched: number },
    queue: AsyncQueue<StarpoEvent>,
    handle: (p: ReadProblem) => AfterProblem,
    touch: () => void,
  ) {
    let unverifiedNoted = false;
    return async ({ batch, resolveOffset, heartbeat, pause, isRunning }: EachBatchPayload): Promise<void> => {
      if (batch.partition !== range.partition) return void pause();
      for (const message of batch.messages) {
        if (!isRunning() || !queue.isOpen || BigInt(message.offset) >= range.end) break;
        touch();
        // Below `next`: fetched before a seek took effect. Passed over, but resolved: a batch with nothing
        // resolved would be fetched again and again.
        const fresh = BigInt(message.offset) >= position.next;
        if (fresh && message.key?.toString() === runId) {
          const { partition } = batch;
          const where = { partition, offset: message.offset, where: `${this.topic}[${partition}]@${message.offset}` };
          const decoded = decodeMessage(message, where);
          if (!unverifiedNoted && 'runId' in decoded && message.headers?.[PAYLOAD_DIGEST_HEADER] === undefined) {
            unverifiedNoted = true;
            const note = 'records written before payload digests are read as they are, not tamper-evident';
            if (!afterProblem(queue, handle, { kind: 'unverified', message: note, ...where })) return;
          }
          if ('runId' in decoded) await pushBeating(queue, decoded, heartbeat);
          else if (!afterProblem(queue, handle, decoded)) return;
        }
        if (fresh) position.next = BigInt(message.offset) + 1n;
        else position.refetched++;
        resolveOffset(message.offset);
        if (BigInt(message.offset) + 1n >= range.end) queue.end();
      }
      await heartbeat();
    };
  }

  /** Fails the read when the consumer makes no progress (broker gone, partition stuck). */
  private watchdog(queue: AsyncQueue<StarpoEvent>, runId: string): { touch: () => void; stop: () => void } {
    const ms = this.options.idleTimeoutMs ?? 30_000;
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    const stalled = (): void => queue.fail(this.failure(runId, new Error(`no record for ${ms} ms before the end`)));
    // The consumer still ends a batch while it disconnects, after the read stopped the watchdog: a timer armed
    // then would hold the process open for `ms` after the read (every short-lived reader lingered 30 s).
    const touch = (): void => {
      clearTimeout(timer);
      if (!stopped) timer = setTimeout(stalled, ms);
    };
    touch();
    const stop = (): void => {
      stopped = true;
      clearTimeout(timer);
    };
    return { touch, stop };
  }

  private failure(runId: string, cause: unknown): StarpoError {
    const why = (cause as Error).message;
    return new StarpoError(`kafka event reader: reading run ${runId} from topic ${this.topic} failed: ${why}`, {
      cause,
      retryable: true,
      details: { runId, topic: this.topic },
    });
  }

  async close(): Promise<void> {}
}

const SESSION_TIMEOUT_MS = 10_000;

/** Pushes onto the queue, heartbeating while a slow reader keeps it full, so the group keeps the member. */
async function pushBeating<T>(queue: AsyncQueue<T>, item: T, heartbeat: () => Promise<void>): Promise<void> {
  let done = false;
  let beating: Promise<void> | undefined; // one at a time, never waited on: a beat to a broker that is away can hang
  const pushed = queue.push(item).finally(() => (done = true));
  while (!done) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([pushed, new Promise((r) => (timer = setTimeout(r, SESSION_TIMEOUT_MS / 3)))]);
    clearTimeout(timer);
    if (!done && !beating) {
      // a failed beat is the consumer's to handle
      beating = heartbeat()
        .catch(() => undefined)
        .finally(() => (beating = undefined));
    }
  }
  await pushed;
}

/** Applies the problem handler's verdict; false when the read ends here (damage: failed, or the intact prefix read). */
function afterProblem(
  queue: AsyncQueue<StarpoEvent>,
  handle: (p: ReadProblem) => AfterProblem,
  problem: ReadProblem,
): boolean {
  try {
    if (handle(problem) === 'read-on') return true;
    queue.end();
  } catch (err) {
    queue.fail(err);
  }
  return false;
}

/** Reader over the Kafka event log (same topic and brokers as createKafkaEventLog). */
export function createKafkaEventReader(options: KafkaEventReaderOptions = {}): KafkaEventReader {
  return new KafkaEventReader(options);
}
