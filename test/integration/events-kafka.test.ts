import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import kafkajs, { Kafka, logLevel, type KafkaMessage } from 'kafkajs';
import { endpoints } from '../../src/endpoints.ts';
import { createKafkaEventLog } from '../../src/events/kafka-log.ts';
import { createKafkaEventReader } from '../../src/events/kafka-reader.ts';
import { EVENT_KEY_HEADER, FINGERPRINT_HEADER, PAYLOAD_DIGEST_HEADER } from '../../src/events/kafka-common.ts';
import { encodeEvent } from '../../src/events/codec.ts';
import { eventKey } from '../../src/events/event-key.ts';
import { replay, replayEvents } from '../../src/events/replay.ts';
import { loadSchemaVersion, schemaRegistry, SCHEMA_DIR } from '../../src/events/schemas.ts';
import { CorruptDataError, StarpoError } from '../../src/errors.ts';
import type { AppendFence, EventReader, LogPosition, ReadProblem, StarpoEvent } from '../../src/events/types.ts';
import { iterationEvent, runEvent, trajectory } from '../unit/events/fixtures.ts';

const kafka = new Kafka({ clientId: 'events-test', brokers: endpoints.kafka.brokers, logLevel: logLevel.NOTHING });
const freshTopic = () => `events-test-${randomUUID()}`;
const T60 = { timeout: 60_000 };
const T30 = { timeout: 30_000 };
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

type Collected = { events: StarpoEvent[]; problems: ReadProblem[] };

async function collect(reader: EventReader, runId: string, allowPartial = false): Promise<Collected> {
  const events: StarpoEvent[] = [];
  const problems: ReadProblem[] = [];
  for await (const e of reader.read(runId, { onProblem: (p) => problems.push(p), allowPartial })) events.push(e);
  return { events, problems };
}

/** Sends raw messages keyed 'run-1', as a foreign or older producer would. */
type RawMessage = { value: Buffer; headers: Record<string, string> };

async function produceRaw(topic: string, messages: RawMessage[]): Promise<void> {
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic, messages: messages.map((m) => ({ key: 'run-1', ...m })) });
  await producer.disconnect();
}

/** Every record in the topic, straight from a plain consumer. */
async function rawMessages(topic: string, count: number): Promise<KafkaMessage[]> {
  const consumer = kafka.consumer({ groupId: `raw-${randomUUID()}` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const messages: KafkaMessage[] = [];
  await new Promise<void>((resolve) => {
    void consumer.run({
      eachMessage: async ({ message }) => {
        if (messages.push(message) === count) resolve();
      },
    });
  });
  await consumer.disconnect();
  return messages;
}

/** 300 events of two interleaved runs, iterations 1..30. */
function interleaved(): StarpoEvent[] {
  const events: StarpoEvent[] = [runEvent('L0', null, 0, 'run-a'), runEvent('L0', null, 0, 'run-b')];
  for (let i = 1; events.length < 300; i++) {
    for (const runId of ['run-a', 'run-b']) {
      events.push(trajectory('L0', i, 0, 0, runId), trajectory('L0', i, 1, 0, runId));
    }
    events.push(iterationEvent('L0', i, 'run-a'));
  }
  return events.slice(0, 300);
}

test(
  'three hundred events of two runs read back per run, in order, with key, schema and digest headers',
  T60,
  async () => {
    const topic = freshTopic();
    const log = createKafkaEventLog({ topic, numPartitions: 3 });
    const events = interleaved();
    await log.append(events.slice(0, 120));
    await log.append(events.slice(120));
    await log.close();
    const reader = createKafkaEventReader({ topic });
    for (const runId of ['run-a', 'run-b']) {
      const { events: read, problems } = await collect(reader, runId);
      assert.deepEqual(
        read,
        events.filter((e) => e.runId === runId),
      );
      assert.deepEqual(problems, []);
    }
    const raw = await rawMessages(topic, events.length);
    const byKey = new Map(events.map((e) => [eventKey(e), e.runId]));
    for (const message of raw) {
      assert.equal(message.headers?.[FINGERPRINT_HEADER]?.toString(), schemaRegistry().current.fingerprint);
      assert.equal(byKey.get(message.headers![EVENT_KEY_HEADER]!.toString()), message.key!.toString());
      assert.equal(message.headers?.[PAYLOAD_DIGEST_HEADER]?.toString(), sha256(message.value!));
    }
  },
);

test('v1 records written before payload digests resolve, noted once as not tamper-evident', T60, async () => {
  const topic = freshTopic();
  const log = createKafkaEventLog({ topic, numPartitions: 1 });
  await log.append([runEvent('L0'), trajectory('L0', 1)]);
  const v1 = loadSchemaVersion(join(SCHEMA_DIR, 'history', 'v1'), 1);
  // v1 has no split and no token ids: they read back as 'train' and empty
  const oldTrajectory = { ...trajectory('L0', 3), split: 'val' };
  const old = { value: encodeEvent(oldTrajectory, v1), headers: { [FINGERPRINT_HEADER]: v1.fingerprint } };
  await produceRaw(topic, [old, old]);
  await log.append([iterationEvent('L0', 1)]);
  await log.close();
  const { events, problems } = await collect(createKafkaEventReader({ topic }), 'run-1');
  const resolvedV1 = { ...trajectory('L0', 3), tokenIds: [], tokenRoles: '' };
  assert.deepEqual(events, [runEvent('L0'), trajectory('L0', 1), resolvedV1, resolvedV1, iterationEvent('L0', 1)]);
  assert.deepEqual(
    problems.map((p) => [p.kind, p.partition, p.offset]),
    [['unverified', 0, '2']],
  );
});

test('a record failing its digest fails the read by offset; allowPartial reads those before it', T60, async () => {
  const topic = freshTopic();
  const log = createKafkaEventLog({ topic, numPartitions: 1 });
  await log.append([runEvent('L0'), trajectory('L0', 1)]);
  const value = encodeEvent(trajectory('L0', 2));
  const sent = sha256(value);
  value[value.length - 2] ^= 0x01; // decodes fine, into a different event
  const current = schemaRegistry().current.fingerprint;
  await produceRaw(topic, [{ value, headers: { [FINGERPRINT_HEADER]: current, [PAYLOAD_DIGEST_HEADER]: sent } }]);
  await log.append([iterationEvent('L0', 1)]);
  await log.close();
  await assert.rejects(
    collect(createKafkaEventReader({ topic }), 'run-1'),
    (err: Error) => err instanceof CorruptDataError && err.message.includes(`(digest-mismatch) at ${topic}[0]@2`),
  );
  const { events, problems } = await collect(createKafkaEventReader({ topic }), 'run-1', true);
  assert.deepEqual(events, [runEvent('L0'), trajectory('L0', 1)]);
  assert.deepEqual(
    problems.map((p) => [p.kind, p.offset]),
    [['digest-mismatch', '2']],
  );
});

test('undecodable records and unknown schemas are damage, named by partition and offset', T60, async () => {
  const topic = freshTopic();
  const log = createKafkaEventLog({ topic, numPartitions: 1 });
  await log.append([runEvent('L0')]);
  await produceRaw(topic, [
    { value: Buffer.from('not avro'), headers: { [FINGERPRINT_HEADER]: schemaRegistry().current.fingerprint } },
    { value: encodeEvent(trajectory('L0', 2)), headers: { [FINGERPRINT_HEADER]: '00'.repeat(32) } },
  ]);
  await log.close();
  await assert.rejects(
    collect(createKafkaEventReader({ topic }), 'run-1'),
    /^CorruptDataError: event log damaged \(undecodable\) at .*\[0\]@1: /,
  );
  const { problems } = await collect(createKafkaEventReader({ topic }), 'run-1', true);
  assert.deepEqual(
    problems.map((p) => [p.kind, p.offset]),
    [['undecodable', '1']],
  );
});

test('replay over Kafka keeps the surviving lineage and drops duplicates', { timeout: 60_000 }, async () => {
  const topic = freshTopic();
  const log = createKafkaEventLog({ topic });
  const events = [
    runEvent('L0'),
    trajectory('L0', 1),
    trajectory('L0', 2),
    runEvent('L1', 'L0', 1),
    trajectory('L1', 2),
    trajectory('L1', 2),
  ];
  await log.append(events);
  await log.close();
  const replayed: StarpoEvent[] = [];
  for await (const e of replay(createKafkaEventReader({ topic }), 'run-1')) replayed.push(e);
  assert.deepEqual(replayed, replayEvents(events));
  assert.equal(replayed.length, 4);
});

test('a read stops at the end offset captured when it started', T30, async () => {
  const topic = freshTopic();
  const log = createKafkaEventLog({ topic });
  await log.append([trajectory('L0', 1), trajectory('L0', 2)]);
  const read = createKafkaEventReader({ topic }).read('run-1')[Symbol.asyncIterator]();
  const first = await read.next();
  await log.append([trajectory('L0', 3)]);
  await log.close();
  const rest: StarpoEvent[] = [];
  for (let r = await read.next(); !r.done; r = await read.next()) rest.push(r.value);
  assert.deepEqual([first.value, ...rest], [trajectory('L0', 1), trajectory('L0', 2)]);
});

test('a finished read leaves no timer behind: its process can exit straight away', T30, async () => {
  const topic = freshTopic();
  const log = createKafkaEventLog({ topic });
  await log.append([trajectory('L0', 1)]);
  await log.close();
  const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  const before = timers();
  assert.equal((await collect(createKafkaEventReader({ topic, idleTimeoutMs: 25_000 }), 'run-1')).events.length, 1);
  // Polled: a client timer in flight at the read's end (a retry, a request's) may take a moment to go; the watchdog's
  // 25 s could not.
  for (let waited = 0; timers() > before && waited < 5000; waited += 100) await new Promise((r) => setTimeout(r, 100));
  assert.ok(timers() <= before, `${timers()} timers against ${before} before the read`);
});

test('reading a topic that does not exist yields no events', { timeout: 30_000 }, async () => {
  assert.deepEqual((await collect(createKafkaEventReader({ topic: freshTopic() }), 'run-1')).events, []);
});

test('when the broker is unreachable append rejects with a retryable error instead of dropping', T30, async () => {
  const log = createKafkaEventLog({ brokers: ['127.0.0.1:1'], retries: 1, topic: freshTopic() });
  await assert.rejects(
    log.append([trajectory('L0', 1)]),
    (err: unknown) =>
      err instanceof StarpoError &&
      err.retryable &&
      /could not append 1 events to topic .* at 127\.0\.0\.1:1/.test(err.message),
  );
  await log.close();
});

async function retentionOf(topic: string): Promise<string | undefined> {
  const { ConfigResourceTypes } = kafkajs;
  const admin = kafka.admin();
  await admin.connect();
  try {
    const { resources } = await admin.describeConfigs({
      resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['retention.ms'] }],
      includeSynonyms: false,
    });
    return resources[0]?.configEntries.find((e) => e.configName === 'retention.ms')?.configValue;
  } finally {
    await admin.disconnect();
  }
}

test(
  'the events topic keeps events forever: created with retention.ms -1, and a 7-day topic is set back to it',
  T60,
  async () => {
    const created = freshTopic();
    const log = createKafkaEventLog({ topic: created });
    await log.append([runEvent('run-1')]);
    await log.close();
    assert.equal(await retentionOf(created), '-1');

    // A topic made by hand (or by an older starpo) with the broker's default 7 days.
    const existing = freshTopic();
    const admin = kafka.admin();
    await admin.connect();
    const week = String(7 * 24 * 3600 * 1000);
    await admin.createTopics({
      topics: [{ topic: existing, numPartitions: 1, configEntries: [{ name: 'retention.ms', value: week }] }],
      waitForLeaders: true,
    });
    await admin.disconnect();
    assert.equal(await retentionOf(existing), week);
    const again = createKafkaEventLog({ topic: existing });
    await again.append([runEvent('run-1')]);
    await again.close();
    assert.equal(await retentionOf(existing), '-1');

    // The user's explicit choice (eventRetentionMs) is what the topic gets.
    const chosen = freshTopic();
    const thirty = createKafkaEventLog({ topic: chosen, retentionMs: 30 * 24 * 3600 * 1000 });
    await thirty.append([runEvent('run-1')]);
    await thirty.close();
    assert.equal(await retentionOf(chosen), String(30 * 24 * 3600 * 1000));
  },
);

/** A fence held in memory; `gate` holds an attempt's write until the test releases it. */
function memoryFence(id: string) {
  const positions: LogPosition[] = [];
  const state = { positions, writes: 0 };
  return {
    positions,
    /** Attempts that got as far as writing their position (recorded or still held by a gate). */
    get writes() {
      return state.writes;
    },
    fence(gate?: { recorded?: Promise<void>; resolved?: Promise<void> }): AppendFence {
      return {
        id,
        read: async () =>
          positions.reduce<LogPosition | undefined>(
            (low, p) => (low && BigInt(low.offset) <= BigInt(p.offset) ? low : p),
            undefined,
          ),
        write: async (p) => {
          state.writes++;
          await gate?.recorded;
          positions.push(p);
          await gate?.resolved;
        },
      };
    },
  };
}

function release(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

test('appendOnce retried under one fence appends once, and a read ending on its commit marker ends', T60, async () => {
  const topic = freshTopic();
  const other = createKafkaEventLog({ topic, numPartitions: 1 });
  await other.append([runEvent('run-1')]); // something before: the retry must scan from the recorded offset
  const events = [trajectory('L0', 1, 0), trajectory('L0', 1, 1), iterationEvent('L0', 1)];
  const { fence, positions } = memoryFence(`test:${topic}:a`);
  const first = createKafkaEventLog({ topic });
  await first.appendOnce(events, fence());
  assert.deepEqual(positions, [{ partition: 0, offset: '1' }]);
  const retry = createKafkaEventLog({ topic }); // a retry runs in another process, with another log
  await retry.appendOnce(events, fence());
  assert.equal(positions.length, 1, 'a retry that finds a position scans; it records none');
  // A different append (another fence) of the same events is not deduplicated: fences name appends, not events.
  await retry.appendOnce([trajectory('L0', 2, 0)], memoryFence(`test:${topic}:b`).fence());
  await Promise.all([first.close(), retry.close(), other.close()]);
  const { events: read } = await collect(createKafkaEventReader({ topic }), 'run-1');
  assert.deepEqual(read, [runEvent('run-1'), ...events, trajectory('L0', 2, 0)]);
});

test('appendOnce returns once its events are readable: the committed end is past them straight away', T60, async () => {
  // The broker answers a commit before its markers land; right after a commit the committed end lagged behind it
  // 16 times in 100 here, and a read started then missed the batch (the checkpoint's sealing step reads just so).
  const topic = freshTopic();
  const log = createKafkaEventLog({ topic, numPartitions: 1 });
  const admin = kafka.admin();
  await admin.connect();
  try {
    for (let i = 0; i < 20; i++) {
      const before = i === 0 ? 0n : BigInt((await admin.fetchTopicOffsets(topic))[0]!.high);
      await log.appendOnce([trajectory('L0', i + 1, 0)], memoryFence(`test:${topic}:${i}`).fence());
      const after = BigInt((await admin.fetchTopicOffsets(topic))[0]!.high);
      assert.ok(after > before, `append ${i}: committed end ${after} is not past ${before}`);
    }
  } finally {
    await Promise.all([log.close(), admin.disconnect()]);
  }
});

test('an attempt still running when its retry appends is fenced out: it rejects and writes nothing', T60, async () => {
  const topic = freshTopic();
  const events = [trajectory('L0', 1, 0), trajectory('L0', 1, 1)];
  const memory = memoryFence(`test:${topic}:z`);
  // Attempt A has recorded where it starts, and stalls before it writes (a GC pause, a hung worker).
  const stall = release();
  const slow = createKafkaEventLog({ topic });
  const a = slow.appendOnce(events, memory.fence({ resolved: stall.promise }));
  while (memory.positions.length === 0) await new Promise((r) => setTimeout(r, 50));
  // Its retry B finds A's position, nothing committed after it, and appends everything.
  const retry = createKafkaEventLog({ topic });
  await retry.appendOnce(events, memory.fence());
  stall.open();
  await assert.rejects(
    a,
    (err: unknown) => err instanceof StarpoError && /could not append 2 events/.test(err.message),
  );

  // Attempt C stalls before it records anything; D appends; C wakes and records a position past D's events.
  const late = release();
  const y = memoryFence(`test:${topic}:y`);
  const c = slow.appendOnce([trajectory('L0', 2, 0)], y.fence({ recorded: late.promise }));
  while (y.writes === 0) await new Promise((r) => setTimeout(r, 50));
  await retry.appendOnce([trajectory('L0', 2, 0)], y.fence());
  late.open();
  await assert.rejects(c);
  assert.equal(y.positions.length, 2, "C's late record lands beside D's; the lower one, D's, is where a scan starts");
  await Promise.all([slow.close(), retry.close()]);
  const { events: read } = await collect(createKafkaEventReader({ topic }), 'run-1');
  assert.deepEqual(read, [...events, trajectory('L0', 2, 0)]);
});
