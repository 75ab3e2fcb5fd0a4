import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../../src/errors.ts';
import { behaviourVersions } from '../../../src/run/checkpoint.ts';
import { createLocalCheckpointStore } from '../../../src/storage/local-store.ts';

const store = createLocalCheckpointStore({ root: mkdtempSync(join(tmpdir(), 'starpo-versions-')) });
const from = { lineageId: 'main', iteration: 6 };

test('the versions a checkpoint names for its next rollouts come back when every one still exists', async () => {
  await store.save('run-1', 'main', 5, [{ name: 'model.bin', bytes: Buffer.from('v5') }]);
  const named = [{ lineageId: 'main', iteration: 5 }];
  assert.deepEqual(await behaviourVersions(store, 'run-1', from, { behaviourPolicies: named }), named);
  assert.deepEqual(await behaviourVersions(store, 'run-1', from, null), []);
  assert.deepEqual(await behaviourVersions(store, 'run-1', from, {}), []);
});

test('a named version that retention deleted is a ConfigError naming both checkpoints', async () => {
  const named = [{ lineageId: 'main', iteration: 4 }];
  await assert.rejects(behaviourVersions(store, 'run-1', from, { behaviourPolicies: named }), (err: unknown) => {
    assert.ok(err instanceof ConfigError);
    assert.match(err.message, /checkpoint main@6 needs policy version main@4 for its next rollouts/);
    return true;
  });
});
