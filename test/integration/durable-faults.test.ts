// Fault tests of the durable driver against the real local services. Restarting a shared service disturbs
// whatever else uses it at that moment, so each restart is kept short and happens only here.
import { test } from 'node:test';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { ActivityFailure, ApplicationFailure, WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { resolveConfig, type RlConfig } from '../../src/rl/config.ts';
import { createEventReader, eventKey, type EventReader, type StarpoEvent } from '../../src/events/index.ts';
import { createSealedRunReader } from '../../src/run/stored-run.ts';
import { replayCommand } from '../../src/cli/commands/replay.ts';
import { createCheckpointStore, parseStorageUri, type CheckpointStore } from '../../src/storage/index.ts';
import { serviceByName, startService, stopService } from '../../src/services/manager.ts';
import { loopbackS3Client } from '../../src/storage/s3-store.ts';
import { mergeOptions, startResume, submitRun, type SubmitOptions } from '../../src/durable/client.ts';
import { spawnWorker, startLocalStack, uniqueId, type LocalStack } from '../../src/durable/harness.ts';
import {
  PROGRESS_QUERY,
  WORKFLOW_TYPE,
  type DurableOptions,
  type Progress,
  type RunOutcome,
} from '../../src/durable/protocol.ts';
import { createResources } from '../../src/durable/resources.ts';
import { createArtifactStore, configKey } from '../../src/storage/artifacts.ts';

Runtime.install({ logger: new DefaultLogger('ERROR') });

const GROUPS = 4;
const SIZE = 2;
const VAL = 2;
const tiny = (iterations: number, extra: string[] = []): RlConfig =>
  resolveConfig({
    overrides: [
      'env=sokoban',
      'maxTurns=2',
      `envGroups=${GROUPS}`,
      `groupSize=${SIZE}`,
      'filter=none',
      'miniBatchSize=4',
      `iterations=${iterations}`,
      'threads=1',
      `valSeeds=${VAL}`,
      'valEvery=0',
      'modelLayers=1',
      'modelHidden=16',
      'modelFfn=32',
      'maxResponseTokens=6',
      ...extra,
    ],
  });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const say = () => undefined;

function submit(stack: LocalStack, config: RlConfig, options: Partial<DurableOptions> = {}, extra: SubmitOptions = {}) {
  return submitRun(config, {
    client: stack.client,
    runId: uniqueId('fault'),
    storeUri: stack.storeUri,
    events: stack.events,
    options: { queues: stack.queues, heartbeatTimeoutMs: 3000, rolloutShards: 2, chunkGroups: 1, ...options },
    ...extra,
  });
}

async function until(handle: WorkflowHandle, ok: (p: Progress) => boolean): Promise<void> {
  for (;;) {
    if (await handle.query<Progress>(PROGRESS_QUERY).then(ok, () => false)) return;
    await sleep(100);
  }
}

type Copy = 'kafka' | 's3';
const readerOf = (stack: LocalStack, copy: Copy): EventReader =>
  copy === 'kafka' ? createEventReader({ kind: 'kafka', ...stack.events }) : createSealedRunReader(stack.storeUri);

/** Raw trajectory events of the run (before any dedup) in one copy of its log, and their distinct keys. */
async function trajectoryKeys(
  stack: LocalStack,
  runId: string,
  copy: Copy = 'kafka',
): Promise<{ total: number; keys: Set<string> }> {
  const reader = readerOf(stack, copy);
  const events: StarpoEvent[] = [];
  for await (const e of reader.read(runId)) if (e.kind === 'trajectory') events.push(e);
  await reader.close();
  return { total: events.length, keys: new Set(events.map(eventKey)) };
}

/** Every (iteration, group, rollout) of training plus the final validation, each exactly once on the topic. */
async function assertEveryTrajectoryOnce(
  stack: LocalStack,
  runId: string,
  iterations: number,
  copy: Copy = 'kafka',
): Promise<void> {
  const { total, keys } = await trajectoryKeys(stack, runId, copy);
  const expected = new Set<string>();
  for (let i = 1; i <= iterations; i++) {
    for (let g = 0; g < GROUPS; g++)
      for (let k = 0; k < SIZE; k++) expected.add(`${runId}/main/${i}/trajectory/train/${g}/${k}`);
  }
  for (let k = 0; k < VAL; k++) expected.add(`${runId}/main/${iterations}/trajectory/val/${k}/0`);
  assert.deepEqual([...keys].sort(), [...expected].sort());
  assert.equal(total, expected.size, `${total} trajectory events for ${expected.size} trajectories`);
}

const execFileAsync = promisify(execFile);
const BIN = fileURLToPath(new URL('../../bin/starpo.js', import.meta.url));

/** Restarts a service the documented way, with the CLI: `starpo services stop <name>`, then `services start <name>`. */
async function restart(name: 'temporal' | 'kafka' | 's3', downMs = 500): Promise<void> {
  // Asynchronously: the workers of this process keep heartbeating meanwhile.
  const starpo = (command: string) => execFileAsync(process.execPath, [BIN, 'services', command, name]);
  await starpo('stop');
  await sleep(downMs);
  await starpo('start'); // every service keeps its data across a restart
}

test(
  'a rollout worker killed with SIGKILL mid-activity: retried on the other worker within 15 s, every trajectory once',
  { timeout: 180_000 },
  async (t) => {
    const stack = await startLocalStack({ label: 'kill', role: 'update' });
    const children = [spawnWorker('rollout', stack.queues), spawnWorker('rollout', stack.queues)];
    try {
      await Promise.all(children.map((c) => c.ready));
      // The config's default heartbeat timeout, not the short one the other fault tests use: this is the measurement.
      const config = tiny(2);
      const { handle, run } = await submit(stack, config, { heartbeatTimeoutMs: config.heartbeatTimeoutMs });
      const started = (l: Record<string, unknown>) => l.msg === 'rollout chunk started' && l.iteration === 1;
      const victim = await Promise.race(children.map((c) => c.waitFor(started).then(() => c)));
      victim.process.kill('SIGKILL');
      const killedAt = Date.now();
      const survivor = children.find((c) => c !== victim)!;
      // An attempt heartbeats as it starts, just before this line (boundary.ts): SIGKILL → the retry's first heartbeat.
      const retried = (l: Record<string, unknown>) =>
        l.activity === 'rolloutShard' && Number(l.attempt) >= 2 && l.msg === 'activity started';
      const recoveryMs = Number((await survivor.waitFor(retried)).time) - killedAt;
      t.diagnostic(`the killed shard was retried ${recoveryMs} ms after SIGKILL`);
      assert.ok(recoveryMs < 15_000, `the killed shard was retried ${recoveryMs} ms after SIGKILL`);
      const outcome = (await handle.result()) as RunOutcome;
      assert.equal(outcome.lastIteration, 2);
      assert.ok(
        survivor.lines.some(
          (l) => l.activity === 'rolloutShard' && Number(l.attempt) >= 2 && l.msg === 'activity finished',
        ),
        'the killed shard was retried on the surviving worker',
      );
      await assertEveryTrajectoryOnce(stack, run.runId, 2);
    } finally {
      for (const c of children) c.process.kill('SIGKILL');
      await stack.close();
    }
  },
);

const RESTARTS = [
  ['temporal', 'the Temporal server restarted mid-run: the run continues to completion'],
  ['kafka', 'the Kafka broker restarted mid-run: no trajectory event is lost'],
  ['s3', 'the S3 server restarted mid-run: no checkpoint or sealed event is lost'],
] as const;

for (const [service, title] of RESTARTS) {
  test(`${title}; it replays completely from Kafka and from S3`, { timeout: 240_000 }, async () => {
    const stack = await startLocalStack({ label: service });
    try {
      const { handle, run } = await submit(stack, tiny(3));
      await until(handle, (p) => p.iteration >= 1);
      await restart(service);
      const outcome = (await handle.result()) as RunOutcome;
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
      await stack.close();
    }
  });
}

/** The failure an activity attempt ended with, as the workflow saw it. */
async function activityFailure(handle: WorkflowHandle): Promise<ApplicationFailure> {
  const err = await handle.result().then(
    () => assert.fail('the run should fail'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof WorkflowFailedError && err.cause instanceof ActivityFailure, String(err));
  assert.ok(err.cause.cause instanceof ApplicationFailure, String(err.cause.cause));
  return err.cause.cause;
}

test(
  'a Kafka broker that stays down fails the activity retryably, with a clear error, in bounded time',
  { timeout: 120_000 },
  async () => {
    const stack = await startLocalStack({ label: 'nokafka' });
    try {
      const t0 = Date.now();
      // nothing listens there: a broker that never comes back
      const down = { ...stack.events, brokers: ['127.0.0.1:1'] };
      const { handle } = await submit(stack, tiny(1), { maxAttempts: 2 }, { events: down });
      const failure = await activityFailure(handle);
      assert.equal(failure.nonRetryable, false);
      assert.match(
        failure.message,
        /kafka event log: could not append \d+ events to topic .* at 127\.0\.0\.1:1 after 5 retries/,
      );
      assert.ok(Date.now() - t0 < 90_000, `took ${Date.now() - t0} ms`);
    } finally {
      await stack.close();
    }
  },
);

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
    const resources = createResources();
    const events = resources.events.bind(resources);
    let stopping: Promise<unknown> | undefined;
    resources.events = (target) => {
      const log = events(target);
      return {
        append: (e) => log.append(e),
        close: () => log.close(),
        appendOnce: async (e, fence) => {
          await log.appendOnce(e, fence);
          // S3 goes down and the worker dies between the append and the heartbeat that would mark the chunk done.
          if (stopping === undefined && e.some((x) => x.kind === 'trajectory' && x.iteration === 2)) {
            stopping = stopService(serviceByName('s3'));
            await stopping;
            throw new Error('worker lost after its append');
          }
        },
      };
    };
    const stack = await startLocalStack({ label: 'lost', resources });
    try {
      const { handle, run } = await submit(stack, tiny(3));
      await s3BackAfter(() => stopping);
      const outcome = (await handle.result()) as RunOutcome;
      assert.equal(outcome.lastIteration, 3);
      await assertEveryTrajectoryOnce(stack, run.runId, 3);
    } finally {
      await stack.close();
    }
  },
);

/** A checkpoint store that calls `trip` as a save of `iteration` begins (the trip stops S3 once). */
function failingDuringSave(store: CheckpointStore, iteration: number, trip: () => void): CheckpointStore {
  return {
    save: (runId, lineageId, i, files) => {
      if (i === iteration) trip();
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
    const trip = () => {
      stopping ??= stopService(serviceByName('s3'));
    };
    resources.store = (uri) => ({ uri, store: failingDuringSave(store(uri).store, 2, trip) });
    const stack = await startLocalStack({ label: 's3', resources });
    const { handle, run } = await submit(stack, tiny(3));
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

test('a malformed config is rejected before anything starts, naming the field', { timeout: 120_000 }, async () => {
  assert.throws(() => tiny(1, ['modelHeads=3']), /config modelHeads: must divide modelHidden/);
  const stack = await startLocalStack({ label: 'badcfg' });
  try {
    // A config that bypassed the client's check still stops at startRun, once, with the field named.
    const runId = uniqueId('badcfg');
    const run = { runId, lineageId: 'main', storeUri: stack.storeUri, events: stack.events };
    const options = mergeOptions({ queues: stack.queues });
    const handle = await stack.client.workflow.start(WORKFLOW_TYPE, {
      taskQueue: stack.queues.update,
      workflowId: `starpo-${runId}`,
      args: [{ run, options, configJson: '{"envGroups": 0}' }],
    });
    const failure = await activityFailure(handle);
    assert.equal(failure.type, 'ConfigError');
    assert.equal(failure.nonRetryable, true);
    assert.match(failure.message, /config envGroups: must be an integer in \[1, 65536\], got 0/);
    assert.equal(await createArtifactStore(stack.storeUri).has(configKey(runId)), false);
    assert.deepEqual(await createCheckpointStore(stack.storeUri).list(runId), []);
  } finally {
    await stack.close();
  }
});
