/**
 * The durable event log on Kafka. Records are keyed by run id (one run's events share a partition and
 * stay ordered), carry their schema fingerprint, event key and payload digest as headers, and are written
 * by an idempotent producer with acks=all, one request in flight, so broker-side retries neither reorder
 * nor duplicate. When the brokers stay unreachable past the retry budget, append rejects with a
 * retryable StarpoError; it never drops events silently.
 *
 * appendOnce makes a batch exactly once across the retries of the activity that writes it, which the
 * idempotent producer alone cannot (its guarantee ends with the producer): each attempt opens a transaction
 * under the fence's id, which fences out every earlier attempt still running, then looks for the batch
 * where an earlier attempt recorded the log's end before it wrote, and writes only what it does not find.
 * Readers read committed records only, so an attempt fenced out mid-write leaves nothing visible.
 */
import kafkajs, { CompressionTypes, type Admin, type Message, type Producer, type RecordMetadata } from 'kafkajs';
import { log } from '../log.ts';
import { StarpoError } from '../errors.ts';
import { endpoints } from '../endpoints.ts';
import { encodeEvent } from './codec.ts';
import { eventKey } from './event-key.ts';
import { createKafkaEventReader } from './kafka-reader.ts';
import {
  createKafka,
  DEFAULT_TOPIC,
  EVENT_KEY_HEADER,
  EVENT_KIND_HEADER,
  FINGERPRINT_HEADER,
  PAYLOAD_DIGEST_HEADER,
  partitionFor,
  type KafkaConnectionOptions,
} from './kafka-common.ts';
import { digest } from './segment-index.ts';
import { schemaRegistry } from './schemas.ts';
import type { AppendFence, ExactlyOnceEventLog, LogPosition, StarpoEvent } from './types.ts';

export interface KafkaEventLogOptions extends KafkaConnectionOptions {
  /** Partitions of the topic when this log creates it. Default 6. */
  numPartitions?: number;
  /** Messages per produce request are capped at this many value bytes (broker limit ~1 MiB). Default 900 KiB. */
  maxRequestBytes?: number;
  compression?: 'none' | 'gzip';
  /**
   * The topic's retention.ms, set when this log creates it and checked (and set again) on every connect: −1 (the
   * default) keeps events forever: the topic is a durable run's event log (the store's sealed copy holds completed
   * iterations only).
   */
  retentionMs?: number;
}

const COMPRESSION = { none: CompressionTypes.None, gzip: CompressionTypes.GZIP } as const;
/**
 * An open transaction holds back every reader of its partition (they read committed records only) until it ends or
 * the broker aborts it after this long: a worker killed mid-append blocks readers for at most this, or until the
 * retry's transaction fences it out, whichever comes first. An append's transaction lasts a few requests.
 */
const TRANSACTION_TIMEOUT_MS = 30_000;

function toMessage(event: StarpoEvent, fingerprint: string): Message {
  const value = encodeEvent(event);
  return {
    key: event.runId,
    value,
    headers: {
      [FINGERPRINT_HEADER]: fingerprint,
      [EVENT_KEY_HEADER]: eventKey(event),
      [EVENT_KIND_HEADER]: event.kind,
      [PAYLOAD_DIGEST_HEADER]: digest(value, 64),
    },
  };
}

/** Value, key and headers of a message, plus a generous 256 bytes of record overhead (lengths, offsets, attributes). */
function messageBytes(message: Message): number {
  const headers = Object.entries(message.headers ?? {}).reduce((n, [k, v]) => n + k.length + String(v).length, 0);
  return (message.value as Buffer).length + String(message.key ?? '').length + headers + 256;
}

/** Splits messages, in order, into requests under the byte cap (a record batch over ~1 MiB is refused). */
export function chunkBySize(messages: readonly Message[], maxBytes: number): Message[][] {
  const chunks: Message[][] = [];
  let current: Message[] = [];
  let bytes = 0;
  for (const message of messages) {
    const size = messageBytes(message);
    if (current.length > 0 && bytes + size > maxBytes) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(message);
    bytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

class KafkaEventLog implements ExactlyOnceEventLog {
  private readonly kafka;
  private readonly topic: string;
  private producer: Promise<Producer> | undefined;
  private tail: Promise<void> = Promise.resolve();

  constructor(private readonly options: KafkaEventLogOptions) {
    this.kafka = createKafka(options);
    this.topic = options.topic ?? DEFAULT_TOPIC;
  }

  append(events: readonly StarpoEvent[]): Promise<void> {
    // One append at a time keeps batches in call order (the producer would interleave concurrent sends).
    const next = this.tail.then(() => this.send(events));
    this.tail = next.catch(() => undefined);
    return next;
  }

  private async send(events: readonly StarpoEvent[]): Promise<void> {
    if (events.length === 0) return;
    try {
      const producer = await this.connected();
      for (const request of this.requests(events)) await producer.send(request);
    } catch (cause) {
      await this.resetProducer();
      throw this.failure(events.length, cause);
    }
  }

  appendOnce(events: readonly StarpoEvent[], fence: AppendFence): Promise<void> {
    const next = this.tail.then(() => this.sendOnce(events, fence));
    this.tail = next.catch(() => undefined);
    return next;
  }

  private async sendOnce(events: readonly StarpoEvent[], fence: AppendFence): Promise<void> {
    if (events.length === 0) return;
    const runId = events[0]!.runId;
    if (events.some((e) => e.runId !== runId)) throw new StarpoError('kafka event log: appendOnce takes one run');
    const producer = this.kafka.producer({
      transactionalId: fence.id,
      idempotent: true,
      maxInFlightRequests: 1,
      transactionTimeout: TRANSACTION_TIMEOUT_MS,
      allowAutoTopicCreation: false,
    });
    try {
      await this.connected(); // the topic exists, with its retention
      await producer.connect();
      // Starting the transaction bumps the id's epoch: an earlier attempt of this append can write no more.
      const transaction = await producer.transaction();
      const written: RecordMetadata[] = [];
      try {
        const missing = await this.notYetAppended(events, fence, runId);
        for (const request of this.requests(missing)) written.push(...(await transaction.send(request)));
        await transaction.commit();
        if (missing.length < events.length) {
          log.info({ fence: fence.id, found: events.length - missing.length }, 'an earlier attempt appended these');
        }
      } catch (err) {
        await transaction.abort().catch(() => undefined);
        throw err;
      }
      await this.readable(written);
    } catch (cause) {
      if (cause instanceof StarpoError) throw cause; // the fence's store or the scan, which name themselves
      throw this.failure(events.length, cause);
    } finally {
      await producer.disconnect().catch(() => undefined);
    }
  }

  /** The events no earlier attempt under this fence committed; records this attempt's start when none began. */
  private async notYetAppended(events: readonly StarpoEvent[], fence: AppendFence, runId: string) {
    const earlier = await fence.read();
    if (earlier === undefined) {
      await fence.write(await this.position(runId));
      return events;
    }
    const reader = createKafkaEventReader({ ...this.options, topic: this.topic });
    const present = new Set<string>();
    for await (const event of reader.read(runId, { fromOffset: earlier.offset })) present.add(eventKey(event));
    return events.filter((e) => !present.has(eventKey(e)));
  }

  /**
   * The run's partition and its committed end now (kafkajs lists offsets read-committed: the last stable offset,
   * which an open transaction holds back): every record written after this is at or past it.
   */
  private async position(runId: string): Promise<LogPosition> {
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      const offsets = await admin.fetchTopicOffsets(this.topic);
      const partition = partitionFor(this.topic, runId, offsets.length);
      return { partition, offset: offsets.find((o) => o.partition === partition)!.high };
    } finally {
      await admin.disconnect();
    }
  }

  /**
   * Waits until a committed transaction's records are readable. The broker answers a commit once it has logged the
   * decision and writes the partitions' commit markers after; until a marker lands, a read-committed reader stops
   * before the transaction, so a read started right after appendOnce (the checkpoint's sealing step, a test) would
   * miss its events. A run's records share a partition and a transaction's records become readable together, so
   * the committed end passing the first offset of its last request is enough.
   */
  private async readable(written: readonly RecordMetadata[]): Promise<void> {
    if (written.length === 0) return;
    const partition = written[0]!.partition;
    const end = written.reduce((high, w) => (BigInt(w.baseOffset!) > high ? BigInt(w.baseOffset!) : high), -1n) + 1n;
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      const deadline = Date.now() + 2 * TRANSACTION_TIMEOUT_MS;
      for (let wait = 10; ; wait = Math.min(2 * wait, 500)) {
        const offsets = await admin.fetchTopicOffsets(this.topic);
        if (BigInt(offsets.find((o) => o.partition === partition)!.high) >= end) return;
        if (Date.now() > deadline) {
          throw new StarpoError(
            `kafka event log: a committed append to ${this.topic}[${partition}] is still not readable after ` +
              `${2 * TRANSACTION_TIMEOUT_MS} ms (an open transaction holds the partition back)`,
            { retryable: true, details: { topic: this.topic, partition } },
          );
        }
        await new Promise((r) => setTimeout(r, wait));
      }
    } finally {
      await admin.disconnect();
    }
  }

  /** The produce requests for the events, in order, each under the broker's request size. */
  private requests(events: readonly StarpoEvent[]) {
    const fingerprint = schemaRegistry().current.fingerprint;
    const messages = events.map((e) => toMessage(e, fingerprint));
    const compression = COMPRESSION[this.options.compression ?? 'none'];
    const maxBytes = this.options.maxRequestBytes ?? 900 * 1024;
    return chunkBySize(messages, maxBytes).map((chunk) => ({
      topic: this.topic,
      acks: -1,
      compression,
      messages: chunk,
    }));
  }

  private failure(events: number, cause: unknown): StarpoError {
    const brokers = (this.options.brokers ?? endpoints.kafka.brokers).join(',');
    return new StarpoError(
      `kafka event log: could not append ${events} events to topic ${this.topic} at ${brokers} ` +
        `after ${this.options.retries ?? 5} retries: ${(cause as Error).message}`,
      { cause, retryable: true, details: { topic: this.topic, events } },
    );
  }

  /** Connects once (creating the topic if needed); a failed attempt is forgotten so the next append retries. */
  private connected(): Promise<Producer> {
    if (this.producer !== undefined) return this.producer;
    const producer = (async () => {
      const admin = this.kafka.admin();
      await admin.connect();
      try {
        const numPartitions = this.options.numPartitions ?? 6;
        const retention = String(this.options.retentionMs ?? -1);
        const configEntries = [{ name: 'retention.ms', value: retention }];
        const topics = [{ topic: this.topic, numPartitions, configEntries }];
        if (!(await admin.createTopics({ topics, waitForLeaders: true }))) await keepFor(admin, this.topic, retention);
      } finally {
        await admin.disconnect();
      }
      const created = this.kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
      await created.connect();
      return created;
    })();
    this.producer = producer;
    producer.catch(() => {
      if (this.producer === producer) this.producer = undefined;
    });
    return producer;
  }

  /**
   * After a failed send the idempotent producer's sequence state is unknown; start a fresh one. A batch
   * that did land before the failure is written again by the caller's retry, and replay dedupes it by key.
   */
  private async resetProducer(): Promise<void> {
    const old = this.producer;
    this.producer = undefined;
    await old?.then((p) => p.disconnect()).catch(() => undefined);
  }

  async close(): Promise<void> {
    await this.tail;
    await this.resetProducer();
  }
}

/**
 * An existing topic's retention made what the run asks: a topic created by hand or by an older starpo keeps the
 * broker's default (7 days here), which would delete a long run's trajectories. alterConfigs replaces the topic's
 * overrides, and starpo sets no other.
 */
async function keepFor(admin: Admin, topic: string, retentionMs: string): Promise<void> {
  const { ConfigResourceTypes } = kafkajs; // CommonJS: not a named export Node's ESM loader can see
  const described = await admin.describeConfigs({
    resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['retention.ms'] }],
    includeSynonyms: false,
  });
  const current = described.resources[0]?.configEntries.find((e) => e.configName === 'retention.ms')?.configValue;
  if (current === retentionMs) return;
  const configEntries = [{ name: 'retention.ms', value: retentionMs }];
  await admin.alterConfigs({
    resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configEntries }],
    validateOnly: false,
  });
  log.warn({ topic, was: current, now: retentionMs }, 'event topic retention set to what the run asks (-1 = forever)');
}

/** The Kafka event log (see the module comment). Connects on the first append. */
export function createKafkaEventLog(options: KafkaEventLogOptions = {}): ExactlyOnceEventLog {
  return new KafkaEventLog(options);
}
