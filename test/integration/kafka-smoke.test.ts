import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import avro from 'avsc';
import { Kafka, logLevel } from 'kafkajs';
import { endpoints } from '../../src/endpoints.ts';

const type = avro.Type.forSchema({
  type: 'record',
  name: 'Smoke',
  namespace: 'dev.starpo.test',
  fields: [
    { name: 'run', type: 'string' },
    { name: 'iteration', type: 'int' },
    { name: 'rewards', type: { type: 'array', items: 'double' } },
  ],
});

test('an Avro record produced to a real Kafka topic is consumed and decoded', { timeout: 60_000 }, async () => {
  const kafka = new Kafka({ clientId: 'starpo-smoke', brokers: endpoints.kafka.brokers, logLevel: logLevel.ERROR });
  const topic = `smoke-${randomUUID()}`;
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
  await admin.disconnect();

  const record = { run: 'run-1', iteration: 7, rewards: [1, -0.1, 10] };
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  await producer.send({ topic, acks: -1, messages: [{ key: 'run-1', value: type.toBuffer(record) }] });
  await producer.disconnect();

  const consumer = kafka.consumer({ groupId: `smoke-${randomUUID()}` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const received = await new Promise<unknown>((resolve) => {
    void consumer.run({ eachMessage: async ({ message }) => resolve(type.fromBuffer(message.value!)) });
  });
  await consumer.disconnect();
  // avsc decodes into a generated record class; compare its fields.
  assert.deepEqual({ ...(received as object) }, record);
});
