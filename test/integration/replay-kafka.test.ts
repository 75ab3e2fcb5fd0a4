import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { endpoints } from '../../src/endpoints.ts';
import { createKafkaEventLog } from '../../src/events/index.ts';
import { FINGERPRINT_HEADER } from '../../src/events/kafka-common.ts';
import { schemaRegistry } from '../../src/events/schemas.ts';
import type { StarpoEvent } from '../../src/events/types.ts';
import { replayCommand } from '../../src/cli/commands/replay.ts';
import { ITERATION_1, RECORDED, iterationEvent, runEvent } from '../unit/replay/fixtures.ts';

const kafka = new Kafka({ clientId: 'replay-test', brokers: endpoints.kafka.brokers, logLevel: logLevel.NOTHING });

async function produceGarbage(topic: string): Promise<void> {
  const producer = kafka.producer();
  await producer.connect();
  const headers = { [FINGERPRINT_HEADER]: schemaRegistry().current.fingerprint };
  await producer.send({ topic, messages: [{ key: 'r', value: Buffer.from('not avro'), headers }] });
  await producer.disconnect();
}

type Replayed = { code: number; out: Record<string, unknown>[] };

async function replayKafka(topic: string, allowPartial = false): Promise<Replayed> {
  const lines: string[] = [];
  const flags = { source: 'kafka', runsDir: 'runs', select: 'successful', split: 'all', topic, json: true };
  Object.assign(flags, { allowPartial });
  const code = await replayCommand('r', flags, (l) => lines.push(l));
  return { code, out: lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

const T60 = { timeout: 60_000 };

test('replay from Kafka fails at an undecodable record; --allow-partial replays the prefix', T60, async () => {
  const topic = `replay-test-${randomUUID()}`;
  const log = createKafkaEventLog({ topic, numPartitions: 1 });
  await log.append([runEvent, ...ITERATION_1, iterationEvent(RECORDED)]);
  await produceGarbage(topic);
  await log.append([...ITERATION_1.map((e) => ({ ...e, iteration: 2 }))]);
  await log.close();
  await assert.rejects(replayKafka(topic), /event log damaged \(undecodable\) at .*\[0\]@6: /);
  const { code, out } = await replayKafka(topic, true);
  assert.deepEqual(
    out.map((j) => j.type),
    ['iteration', 'problem', 'summary'],
  );
  assert.deepEqual([code, out[0].ok, out[1].kind, out[1].partition, out[1].offset], [0, true, 'undecodable', 0, '6']);
});

test('replay from Kafka keeps the surviving lineage only: nothing lost, nothing counted twice', T60, async () => {
  const topic = `replay-test-${randomUUID()}`;
  const log = createKafkaEventLog({ topic });
  const r1 = <T extends StarpoEvent>(e: T): T => ({ ...e, lineageId: 'r1' });
  const resumed = { ...runEvent, lineageId: 'r1', action: 'RESUMED' as const, parentLineageId: 'main' };
  // main's iteration 1 recorded a wrong metric; lineage r1 redid iteration 1 from checkpoint 0.
  await log.append([runEvent, ...ITERATION_1, iterationEvent({ ...RECORDED, success_rate: 0.75 })]);
  await log.append([resumed, ...ITERATION_1.map(r1), r1(iterationEvent(RECORDED))]);
  await log.close();
  const { code, out } = await replayKafka(topic);
  const summary = out.at(-1)!;
  assert.deepEqual([code, out[0].lineageId, out[0].ok, summary.trajectories], [0, 'r1', true, 4]);
  assert.deepEqual(summary.dropped, { duplicate: 0, superseded: 5 });
});

test(
  'replay of a run id the topic holds no event of fails, naming the topic, instead of replaying nothing',
  T60,
  async () => {
    const topic = `replay-test-${randomUUID()}`;
    const log = createKafkaEventLog({ topic, numPartitions: 1 });
    await log.append([runEvent, ...ITERATION_1, iterationEvent(RECORDED)]);
    await log.close();
    const flags = { source: 'kafka', runsDir: 'runs', select: 'successful', split: 'all', topic };
    await assert.rejects(
      replayCommand('nope', flags, () => undefined),
      new RegExp(`^StarpoError: run nope: no events in Kafka topic ${topic} \\(check the run id and --source\\)$`),
    );
  },
);
