import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createArtifactStore } from '../../../src/storage/artifacts.ts';
import { appendFence, fenceFolder } from '../../../src/durable/event-fence.ts';
import { CorruptDataError } from '../../../src/errors.ts';

const id = { runId: 'r', lineageId: 'main', iteration: 3 };
const store = () => createArtifactStore(pathToFileURL(mkdtempSync(join(tmpdir(), 'starpo-fence-'))).href);

test('a fence names its append uniquely per topic, run, lineage, iteration and append', () => {
  const a = store();
  assert.equal(appendFence(a, 't', id, 'r0-s1-c2').id, 'starpo:t:r:main:3:r0-s1-c2');
  assert.notEqual(appendFence(a, 't', id, 'validate').id, appendFence(a, 'u', id, 'validate').id);
  assert.notEqual(appendFence(a, 't', id, 'validate').id, appendFence(a, 't', { ...id, iteration: 4 }, 'validate').id);
});

test("a fence keeps every attempt's position and reads the lowest; other appends' fences are apart", async () => {
  const a = store();
  const fence = appendFence(a, 't', id, 'c0');
  assert.equal(await fence.read(), undefined);
  await fence.write({ partition: 2, offset: '120' });
  await fence.write({ partition: 2, offset: '35' }); // a slow earlier attempt's record, landing late
  await fence.write({ partition: 2, offset: '900' });
  assert.deepEqual(await appendFence(a, 't', id, 'c0').read(), { partition: 2, offset: '35' });
  assert.equal(await appendFence(a, 't', id, 'c1').read(), undefined);
  assert.equal((await a.keys(fenceFolder(id, 'c0'))).length, 3);
});

test('a damaged fence record is corrupt data, named by its key', async () => {
  const a = store();
  await a.put(`${fenceFolder(id, 'c0')}x.json`, Buffer.from('{"partition":1,"offset":-4}'));
  await assert.rejects(
    appendFence(a, 't', id, 'c0').read(),
    (err: unknown) => err instanceof CorruptDataError && /event fence .*x\.json: not a log position/.test(err.message),
  );
});
