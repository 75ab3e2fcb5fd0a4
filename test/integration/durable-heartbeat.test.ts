import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { pathToFileURL } from 'node:url';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createActivities } from '../../activities/index.ts';
import { canonicalConfigJSON, resolveConfig } from '../../src/rl/config.ts';
import { createArtifactStore } from '../../src/storage/artifacts.ts';
import { uniqueId } from '../../src/durable/harness.ts';
import { createResources } from '../../src/durable/resources.ts';

const config = resolveConfig({
  overrides: [
    'env=bandit',
    'envGroups=2',
    'groupSize=2',
    'iterations=1',
    'threads=1',
    'modelLayers=1',
    'modelHidden=16',
    'modelFfn=32',
    'maxResponseTokens=4',
    'miniBatchSize=1',
  ],
});

test('a retried rollout shard skips the chunks its last heartbeat reported done', { timeout: 120_000 }, async () => {
  const resources = createResources();
  const a = createActivities(resources);
  const storeUri = `${pathToFileURL(mkdtempSync(`${tmpdir()}/starpo-heartbeat-`)).href}/`;
  const run = { runId: uniqueId('hb'), lineageId: 'main', storeUri, events: { topic: `starpo.${uniqueId('hb')}` } };
  try {
    await new MockActivityEnvironment().run(a.startRun, { run, configJson: canonicalConfigJSON(config) });
    const retry = new MockActivityEnvironment({ attempt: 2, heartbeatDetails: { done: [0], chunks: 2 } });
    const beats: unknown[] = [];
    retry.on('heartbeat', (d: unknown) => beats.push(d));
    const input = {
      run,
      iteration: 1,
      policy: { lineageId: 'main', iteration: 0 },
      round: 0,
      shard: 0,
      groups: [0, 1],
      chunkGroups: 1,
    };
    const out = (await retry.run(a.rolloutShard, input)) as { keys: string[] };
    const artifacts = createArtifactStore(storeUri);
    assert.deepEqual(
      await Promise.all(out.keys.map((k) => artifacts.has(k))),
      [false, true],
      'chunk 0 was not played again',
    );
    assert.deepEqual(beats.at(-1), { done: [0, 1], chunks: 2 });
  } finally {
    await resources.close();
  }
});
