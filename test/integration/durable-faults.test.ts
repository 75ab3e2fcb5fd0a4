// Fault tests of the durable driver that stop or restart the real local services. Restarting a shared service
// disturbs whatever else uses it at that moment, so each restart is kept short and happens only here, and the test
// runner runs this file beside no other service user. Faults that leave the services alone are in
// durable-worker-faults.test.ts.
import { test } from 'node:test';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { replayCommand } from '../../src/cli/commands/replay.ts';
import { log as logger, logToFile } from '../../src/log.ts';
import {
  createKafkaEventLog,
  createKafkaEventReader,
  eventIteration,
  type StarpoEvent,
} from '../../src/events/index.ts';
import { createCheckpointStore, parseStorageUri, type CheckpointStore } from '../../src/storage/index.ts';
import { serviceByName, startService, stopService } from '../../src/services/manager.ts';
import { loopbackS3Client } from '../../src/storage/s3-store.ts';
import { startResume } from '../../src/durable/client.ts';
import { startLocalStack, type LocalStack } from '../../src/durable/harness.ts';
import type { RunOutcome } from '../../src/durable/protocol.ts';
import { createResources, type WorkerResources } from '../../src/durable/resources.ts';
import { activityFailure, assertEveryTrajectoryOnce, submitTiny, tinyConfig } from './fixtures/durable-run.ts';
import { trajectory } from '../unit/events/fixtures.ts';

Runtime.install({ logger: new DefaultLogger('ERROR') });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const T120 = { timeout: 120_000 };
type Said = { msg: string };
const say = () => undefined;

const execFileAsync = promisify(execFile);
const BIN = fileURLToPath(new URL('../../bin/starpo.js', import.meta.url));

type ServiceName = 'temporal' | 'kafka' | 's3';

/** Stops or starts a service the documented way, with the CLI: `starpo services stop|start <name>`. */
async function service(command: 'stop' | 'start', name: ServiceName): Promise<void> {
  await execFileAsync(process.execPath, [BIN, 'services', command, name]); // every service keeps its data
}

/** Worker resources whose exactly-once appends go through `around`, given the events and the append itself. */
function aroundAppends(around: (events: readonly StarpoEvent[], append: () => Promise<void>) => Promise<void>) {
  const resources = createResources();
  const events = resources.events.bind(resources);
  resources.events = (target) => {
    const log = events(target);
    return {
      append: (e) => log.append(e),
      close: () => log.close(),
      appendOnce: (e, fence) => around(e, () => log.appendOnce(e, fence)),
    };
  };
  return resources;
}

const ofIteration2 = (events: readonly StarpoEvent[]) =>
  events.some((e) => e.kind === 'trajectory' && e.iteration === 2);

const RESTARTS = [
  ['temporal', 'the Temporal server restarted mid-run: the run continues to completion'],
  ['kafka', 'the Kafka broker restarted mid-run: no trajectory event is lost'],
  ['s3', 'the S3 server restarted mid-run: no checkpoint or sealed event is lost'],
] as const;

/**
 * Worker resources whose first append of an iteration-2 trajectory restarts `name` first: the service is down
 * before that append goes on and starts again half a second later, so the fault lands mid-run and mid-activity on
 * any machine's speed (a restart timed from outside could land after a fast run had ended, testing nothing).
 */
function restartingMidRun(name: ServiceName): {
  resources: WorkerResources;
  restarted: () => Promise<void> | undefined;
} {
  let stopped: Promise<void> | undefined;
  let restarted: Promise<void> | undefined;
  const resources = aroundAppends(async (events, append) => {
    if (!stopped && ofIteration2(events)) {
      stopped = service('stop', name);
      restarted = stopped.then(() => sleep(500)).then(() => service('start', name));
      await stopped;
    }
    await append();
  });
  return { resources, restarted: () => restarted };
}

for (const [name, title] of RESTARTS) {
  test(`${title}; it replays completely from Kafka and from S3`, { timeout: 240_000 }, async () => {
    const { resources, restarted } = restartingMidRun(name);
    const stack = await startLocalStack({ label: name, resources });
    try {
      const { handle, run } = await submitTiny(stack, tinyConfig(3));
      const outcome = (await handle.result()) as RunOutcome;
      assert.ok(restarted(), `${name} was restarted during the run`);
      await restarted();
      assert.equal(outcome.lastIteration, 3);
      for (const copy of ['kafka', 's3'] as const) {
        await assertEveryTrajectoryOnce(stack, run.runId, 3, copy);
        const flags = {
          runsDir: 'runs',
          select: 'all',
          split: 'all',
          topic: stack.events.topic,
          store: stack.storeUri,
        };
        const lines: string[] = [];
        assert.equal(await replayCommand(run.runId, { ...flags, source: copy, json: true }, (l) => lines.push(l)), 0);
        const iterations = lines.map((l) => JSON.parse(l) as { type: string; ok?: boolean });
        assert.deepEqual(
          iterations.filter((j) => j.type === 'iteration').map((j) => j.ok),
          [true, true, true],
          `${copy}: every recorded metric recomputed`,
        );
      }
    } finally {
      await restarted(); // the service is back for the next test, whatever happened to the run
      await stack.close();
    }
  });
}

test('the Kafka broker restarted mid-read: the reader goes on where it was, every event once', T120, async () => {
  const topic = `restart-read-${randomUUID()}`;
  const log = createKafkaEventLog({ topic });
  // ~10 MB, so the reader fetches again after the restart (kafkajs takes 1 MB of a partition a fetch).
  const event = (i: number) => ({
    ...trajectory('L0', i),
    tokenIds: [...Array(2000).keys()],
    tokenRoles: '0'.repeat(2000),
  });
  const N = 3000;
  for (let i = 0; i < N; i += 500) await log.append(Array.from({ length: 500 }, (_, k) => event(i + k + 1)));
  await log.close();
  const seen = new Map<number, number>();
  let restarted: Promise<void> | undefined;
  const said: string[] = [];
  let refetched: number | undefined;
  const restore = logToFile(join(tmpdir(), `${topic}.log`), (line) => {
    const entry = JSON.parse(line) as Said & { refetched?: number };
    said.push(entry.msg);
    if (entry.msg === 'kafka read ended') refetched = entry.refetched;
  });
  const level = logger.level;
  logger.level = 'debug';
  // Down until the consumer has spent its retries and crashed: a broker back within them is only a slow fetch.
  const startOnceCrashed = async (): Promise<void> => {
    for (let waited = 0; !said.includes('kafka reader restarts') && waited < 60_000; waited += 100) await sleep(100);
    await service('start', 'kafka');
  };
  try {
    // Fewer client retries than the default's ~10 s: the crash comes sooner, the path is the same. The watchdog is
    // not what this tests: past the test's own timeout, whatever the machine's speed.
    for await (const e of createKafkaEventReader({ topic, idleTimeoutMs: 600_000, retries: 2 }).read('run-1')) {
      const i = eventIteration(e);
      seen.set(i, (seen.get(i) ?? 0) + 1);
      if (seen.size === 200) {
        // Stopped while the reader waits: most of the partition is still to fetch, whatever the machine's speed.
        await service('stop', 'kafka');
        restarted = startOnceCrashed();
      }
    }
  } finally {
    await restarted; // the broker is back for the next test, whatever happened to the read
    restore();
    logger.level = level;
  }
  assert.ok(said.includes('kafka reader restarts'), 'the consumer crashed and kafkajs restarted it');
  assert.equal(seen.size, N);
  console.log(`records fetched again after the restart: ${refetched}`);
  assert.ok(refetched !== undefined && refetched < 200, `the restarted consumer rejoined where the read was`);
  assert.deepEqual(
    [...seen.values()].filter((n) => n !== 1),
    [],
    'no event delivered twice',
  );
});

/** Waits until the test's trip has stopped S3, then starts it again a second later. */
async function s3BackAfter(stopping: () => Promise<unknown> | undefined): Promise<void> {
  while (!stopping()) await sleep(50);
  await stopping();
  await sleep(1000);
  await startService(serviceByName('s3'), say);
}

test(
  'S3 and the rollout attempt lost right after its Kafka append: the retry redoes the chunk and appends nothing again',
  { timeout: 180_000 },
  async () => {
    let stopping: Promise<unknown> | undefined;
    const resources = aroundAppends(async (events, append) => {
      await append();
      // S3 goes down and the worker dies between the append and the heartbeat that would mark the chunk done.
      if (stopping === undefined && ofIteration2(events)) {
        stopping = stopService(serviceByName('s3'));
        await stopping;
        throw new Error('worker lost after its append');
      }
    });
    const stack = await startLocalStack({ label: 'lost', resources });
    try {
      const { handle, run } = await submitTiny(stack, tinyConfig(3));
      await s3BackAfter(() => stopping);
      const outcome = (await handle.result()) as RunOutcome;
      assert.equal(outcome.lastIteration, 3);
      await assertEveryTrajectoryOnce(stack, run.runId, 3);
    } finally {
      await stack.close();
    }
  },
);

/**
 * A checkpoint store whose save of `iteration` waits for `trip` (which stops S3 once) before it begins: the save
 * always meets S3 down, however fast the machine writes it.
 */
function failingDuringSave(store: CheckpointStore, iteration: number, trip: () => Promise<unknown>): CheckpointStore {
  return {
    save: async (runId, lineageId, i, files) => {
      if (i === iteration) await trip();
      return store.save(runId, lineageId, i, files);
    },
    load: (...args) => store.load(...args),
    list: (...args) => store.list(...args),
    latest: (...args) => store.latest(...args),
    delete: (...args) => store.delete(...args),
  };
}

let s3Run: { stack: LocalStack; runId: string } | undefined;

test(
  'S3 down during a checkpoint: the save is retried and every checkpoint is complete and verified, or absent',
  { timeout: 180_000 },
  async () => {
    const resources = createResources();
    let stopping: Promise<unknown> | undefined;
    const store = resources.store.bind(resources);
    const trip = () => (stopping ??= stopService(serviceByName('s3')));
    resources.store = (uri) => ({ uri, store: failingDuringSave(store(uri).store, 2, trip) });
    const stack = await startLocalStack({ label: 's3', resources });
    const { handle, run } = await submitTiny(stack, tinyConfig(3));
    try {
      await s3BackAfter(() => stopping);
      const outcome = (await handle.result()) as RunOutcome;
      assert.equal(outcome.lastIteration, 3);
      const checkpoints = createCheckpointStore(stack.storeUri);
      const listed = await checkpoints.list(run.runId);
      assert.deepEqual(
        listed.map((c) => c.iteration),
        [1, 2, 3],
      ); // 0 dropped by retention (keep the last 3)
      for (const c of listed) await checkpoints.load(c.runId, c.lineageId, c.iteration); // verifies every hash
      for (const copy of ['kafka', 's3'] as const) await assertEveryTrajectoryOnce(stack, run.runId, 3, copy);
      s3Run = { stack, runId: run.runId };
    } finally {
      if (!s3Run) await stack.close();
    }
  },
);

test(
  'a corrupted checkpoint (one flipped byte) is refused by its hash when a run resumes from it',
  { timeout: 120_000 },
  async () => {
    assert.ok(s3Run, 'needs the run of the previous test');
    const { stack, runId } = s3Run;
    try {
      const store = createCheckpointStore(stack.storeUri);
      const { manifest } = await store.load(runId, 'main', 1, { only: [] });
      const file = manifest.files.find((f) => f.name === 'actor.model.safetensors')!;
      const loc = parseStorageUri(`${stack.storeUri}${runId}/checkpoints/main/00000001/${file.key}`);
      assert.equal(loc.scheme, 's3');
      const s3 = loopbackS3Client();
      const where = { Bucket: loc.scheme === 's3' ? loc.bucket : '', Key: loc.scheme === 's3' ? loc.key : '' };
      const bytes = Buffer.from(await (await s3.send(new GetObjectCommand(where))).Body!.transformToByteArray());
      bytes[bytes.length - 1] ^= 0x01;
      await s3.send(new PutObjectCommand({ ...where, Body: bytes }));
      const { handle } = await startResume(runId, 1, { client: stack.client, options: { maxAttempts: 3 } });
      const failure = await activityFailure(handle);
      assert.equal(failure.type, 'CorruptDataError');
      assert.equal(failure.nonRetryable, true);
      assert.match(failure.message, /actor\.model\.safetensors fails its integrity check/);
    } finally {
      await stack.close();
    }
  },
);
