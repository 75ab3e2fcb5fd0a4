// Fault tests of the durable driver that leave the shared services alone (a worker of the test's own killed, a
// broker address nothing listens on, a malformed config), so they run beside other files; the ones that stop or
// restart Temporal, Kafka or S3 are in durable-faults.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { createCheckpointStore } from '../../src/storage/index.ts';
import { mergeOptions } from '../../src/durable/client.ts';
import { spawnWorker, startLocalStack, uniqueId } from '../../src/durable/harness.ts';
import { WORKFLOW_TYPE, type RunOutcome } from '../../src/durable/protocol.ts';
import { createArtifactStore, configKey } from '../../src/storage/artifacts.ts';
import { activityFailure, assertEveryTrajectoryOnce, submitTiny, tinyConfig } from './fixtures/durable-run.ts';

Runtime.install({ logger: new DefaultLogger('ERROR') });

test(
  'a rollout worker killed with SIGKILL mid-activity: retried on the other worker within 15 s, every trajectory once',
  { timeout: 180_000 },
  async (t) => {
    const stack = await startLocalStack({ label: 'kill', role: 'update' });
    const children = [spawnWorker('rollout', stack.queues), spawnWorker('rollout', stack.queues)];
    try {
      await Promise.all(children.map((c) => c.ready));
      // The config's default heartbeat timeout, not the short one the other fault tests use: this is the measurement.
      const config = tinyConfig(2);
      const { handle, run } = await submitTiny(stack, config, { heartbeatTimeoutMs: config.heartbeatTimeoutMs });
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

test(
  'a Kafka broker that stays down fails the activity retryably, with a clear error, in bounded time',
  { timeout: 120_000 },
  async () => {
    const stack = await startLocalStack({ label: 'nokafka' });
    try {
      const t0 = Date.now();
      // nothing listens there: a broker that never comes back
      const down = { ...stack.events, brokers: ['127.0.0.1:1'] };
      const { handle } = await submitTiny(stack, tinyConfig(1), { maxAttempts: 2 }, { events: down });
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

test('a malformed config is rejected before anything starts, naming the field', { timeout: 120_000 }, async () => {
  assert.throws(() => tinyConfig(1, ['modelHeads=3']), /config modelHeads: must divide modelHidden/);
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
