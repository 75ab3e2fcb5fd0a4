/**
 * The heartbeat timeout travels from the run's config into the workflow input and from there into every
 * activity's options; the worker heartbeats often enough within it. (The time a killed worker costs is measured
 * against real services in test/integration/durable-worker-faults.test.ts.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MockActivityEnvironment } from '@temporalio/testing';
import { resolveConfig } from '../../../src/rl/config.ts';
import { runOptions } from '../../../src/durable/client.ts';
import { activity, heartbeatEvery, setHeartbeatInterval } from '../../../src/durable/boundary.ts';
import { activityOptions } from '../../../workflows/activities.ts';
import { heartbeatIntervalFlag } from '../../../src/cli/commands/worker.ts';

test('the config heartbeatTimeoutMs reaches every activity option; an explicit option still wins', () => {
  const byDefault = runOptions(resolveConfig());
  assert.equal(byDefault.heartbeatTimeoutMs, 10_000);
  assert.equal(activityOptions(byDefault).heartbeatTimeout, 10_000);
  const configured = runOptions(resolveConfig({ overrides: ['heartbeatTimeoutMs=4000'] }));
  assert.equal(activityOptions(configured).heartbeatTimeout, 4000);
  assert.equal(runOptions(resolveConfig(), { heartbeatTimeoutMs: 3000 }).heartbeatTimeoutMs, 3000);
  assert.throws(
    () => resolveConfig({ overrides: ['heartbeatTimeoutMs=500'] }),
    /config heartbeatTimeoutMs: must be an integer in \[1000, 3600000\], got 500/,
  );
});

test('activities heartbeat every fifth of the timeout, or at the worker flag, never past half of it', () => {
  try {
    assert.deepEqual([heartbeatEvery(10_000), heartbeatEvery(60_000), heartbeatEvery(300)], [2000, 12_000, 100]);
    setHeartbeatInterval(heartbeatIntervalFlag('500'));
    assert.deepEqual([heartbeatEvery(10_000), heartbeatEvery(800)], [500, 400]);
  } finally {
    setHeartbeatInterval(undefined);
  }
  assert.throws(() => heartbeatIntervalFlag('fast'), /--heartbeat-interval: must be whole milliseconds/);
  assert.throws(() => heartbeatIntervalFlag('50'), /got "50"/);
});

test('an activity that runs for three intervals heartbeats on its own, without reporting progress', async () => {
  const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 1000 });
  const beats: number[] = [];
  let third: () => void = () => undefined;
  const thirdBeat = new Promise<void>((r) => (third = r));
  env.on('heartbeat', () => beats.push(Date.now()) === 3 && third());
  // It runs until its third beat (every 200 ms) or 10 s: how many beats a fixed time holds depends on the load.
  const slow = activity('slow', async () => {
    let cap: NodeJS.Timeout | undefined;
    await Promise.race([thirdBeat, new Promise((r) => (cap = setTimeout(r, 10_000)))]);
    clearTimeout(cap);
  });
  await env.run(slow, {});
  assert.ok(beats.length >= 3, `${beats.length} heartbeats, at a 200 ms interval`);
  assert.ok(beats[2] - beats[0] < 5000, 'the beats come at the interval, not at the end');
});
