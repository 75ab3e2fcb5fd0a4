/**
 * Trajectory events per second appended to the Kafka event log and to local Avro files.
 *   node --import tsx scripts/bench-events.ts [--events 20000] [--batch 512]
 * Prints one JSON line per backend. Events are realistic: 5 Sokoban turns of observation and response text.
 * Needs the local Kafka (node bin/starpo.js services start); uses a fresh topic and deletes it afterwards.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { encodeEvent } from '../src/events/codec.ts';
import { createKafkaEventLog } from '../src/events/kafka-log.ts';
import { createLocalEventLog } from '../src/events/local-log.ts';
import type { EventLog, TrajectoryEvent, Turn } from '../src/events/types.ts';
import { endpoints } from '../src/endpoints.ts';

const { values } = parseArgs({
  options: { events: { type: 'string', default: '20000' }, batch: { type: 'string', default: '512' } },
});
const total = Number(values.events);
const batchSize = Number(values.batch);

const BOARD = '######\n#__O_#\n#_X__#\n#_P__#\n#____#\n######';

function turn(i: number): Turn {
  return {
    observation:
      `Turn ${i + 1}:\nState:\n${BOARD}\nYou have ${10 - i * 2} actions left. ` +
      'Always output: <think> [Your thoughts] </think> <answer> [your answer] </answer> with no extra text. ' +
      'Strictly follow this format. Max response length: 100 words.',
    response:
      '<think>The box X is at row 2 and the target O is up and right of it. ' +
      'I should move around the box and push it ' +
      'up, then right, avoiding walls.</think><answer>Left || Up || Up</answer>',
    executedActions: ['Left', 'Up', 'Up'],
    envReward: -0.3,
    formatPenalty: 0,
    actionsValid: 3,
    actionsEffective: 2,
    promptTokens: 180 + 90 * i,
    responseTokens: 48,
    toolCalls: [],
  };
}

function trajectory(runId: string, n: number): TrajectoryEvent {
  const now = new Date();
  return {
    kind: 'trajectory',
    runId,
    lineageId: 'L0',
    iteration: 1 + Math.floor(n / 128),
    group: Math.floor(n / 16) % 8,
    rolloutIndex: n % 16,
    envName: 'sokoban',
    envSeed: 1000 + n,
    policyVersion: Math.floor(n / 128),
    turns: [0, 1, 2, 3, 4].map(turn),
    trajectoryReturn: -1.5,
    success: false,
    startedAt: now,
    finishedAt: now,
    extras: {},
    split: 'train',
    // A compact-template Sokoban episode is ~800 tokens; a quarter of them written by the model.
    tokenIds: Array.from({ length: 800 }, (_, i) => (i * 37) % 120),
    tokenRoles: Array.from({ length: 800 }, (_, i) => (i % 4 ? '3' : '4')).join(''),
  };
}

async function measure(backend: string, log: EventLog, runId: string): Promise<void> {
  const events = Array.from({ length: total }, (_, n) => trajectory(runId, n));
  const eventBytes = encodeEvent(events[0]).length;
  await log.append(events.slice(0, batchSize)); // warm-up: connection, topic, segment file
  const start = process.hrtime.bigint();
  for (let i = 0; i < total; i += batchSize) await log.append(events.slice(i, i + batchSize));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  await log.close();
  const perSecond = total / seconds;
  console.log(
    JSON.stringify({
      backend,
      events: total,
      batch: batchSize,
      eventBytes,
      seconds: +seconds.toFixed(3),
      eventsPerSecond: Math.round(perSecond),
      mibPerSecond: +((perSecond * eventBytes) / 2 ** 20).toFixed(1),
    }),
  );
}

const topic = `bench-events-${randomUUID()}`;
await measure('kafka', createKafkaEventLog({ topic, numPartitions: 1 }), 'bench-run');
const admin = new Kafka({ brokers: endpoints.kafka.brokers, logLevel: logLevel.NOTHING }).admin();
await admin.connect();
await admin.deleteTopics({ topics: [topic] });
await admin.disconnect();

const root = mkdtempSync(join(tmpdir(), 'starpo-bench-'));
await measure('local-avro', createLocalEventLog({ root }), 'bench-run');
rmSync(root, { recursive: true, force: true });
