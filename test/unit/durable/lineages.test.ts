import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createArtifactStore, lineageKey, type ArtifactStore } from '../../../src/storage/artifacts.ts';
import { chainOf, retentionView, savedLineageStarts } from '../../../src/durable/lineages.ts';
import type { LineageStart } from '../../../src/events/index.ts';
import { applyRetention, type CheckpointInfo, type CheckpointStore } from '../../../src/storage/index.ts';

const main: LineageStart = { lineageId: 'main', parentLineageId: null, fromIteration: 0, forks: 0 };
const f1: LineageStart = { lineageId: 'f1-2', parentLineageId: 'main', fromIteration: 2, forks: 1 };
const r1: LineageStart = { lineageId: 'r1', parentLineageId: 'main', fromIteration: 5, forks: 0 };

async function savedStarts(...starts: LineageStart[]): Promise<{ root: string; artifacts: ArtifactStore }> {
  const root = mkdtempSync(join(tmpdir(), 'starpo-lineages-'));
  const artifacts = createArtifactStore(pathToFileURL(root).href);
  for (const s of starts) await artifacts.put(lineageKey('r', s.lineageId), Buffer.from(JSON.stringify(s)));
  return { root, artifacts };
}

test('the saved starts are every lineage of the run; a put cut short (.tmp) or a damaged record is not one', async () => {
  const { root, artifacts } = await savedStarts(main, f1, r1);
  writeFileSync(join(root, 'r', 'lineages', 'r2.json.tmp'), '{');
  assert.deepEqual(
    await artifacts.keys('r/lineages/'),
    ['f1-2', 'main', 'r1'].map((id) => `r/lineages/${id}.json`),
  );
  writeFileSync(join(root, 'r', 'lineages', 'r3.json'), '{"lineageId": "r3", "parentLin');
  writeFileSync(join(root, 'r', 'lineages', 'r4.json'), '[]');
  const ids = (await savedLineageStarts(artifacts, 'r')).map((s) => s.lineageId);
  assert.deepEqual(ids, ['f1-2', 'main', 'r1']);
  assert.deepEqual(await savedLineageStarts(artifacts, 'other'), []);
});

test("a lineage's chain runs from the root; a parent without a saved start counts as the root", () => {
  assert.deepEqual(
    chainOf([main, f1, r1], 'f1-2').map((s) => s.lineageId),
    ['main', 'f1-2'],
  );
  assert.deepEqual(chainOf([f1], 'f1-2'), [{ lineageId: 'main', parentLineageId: null, fromIteration: 0 }, f1]);
  const loop = [
    { lineageId: 'a', parentLineageId: 'b', fromIteration: 1 },
    { lineageId: 'b', parentLineageId: 'a', fromIteration: 1 },
  ];
  assert.deepEqual(
    chainOf(loop, 'a').map((s) => s.lineageId),
    ['b', 'a'],
  ); // damaged records that loop end the walk
});

test('durable retention keeps the checkpoint every saved lineage started from, abandoned ones included', async () => {
  const { artifacts } = await savedStarts(main, f1, r1);
  const ckpt = (lineageId: string, iteration: number): CheckpointInfo => ({
    runId: 'r',
    lineageId,
    iteration,
    uri: '',
    manifestUri: '',
  });
  const deleted: string[] = [];
  const store = {
    list: async () => [1, 2, 3, 4, 5, 6].map((i) => ckpt('main', i)).concat([ckpt('f1-2', 3), ckpt('r1', 6)]),
    delete: async (_r: string, l: string, i: number) => void deleted.push(`${l}@${i}`),
  } as unknown as CheckpointStore;
  await applyRetention(await retentionView(store, artifacts, 'r'), 'r', { keepLast: 1, keepEvery: 0 });
  assert.ok(!deleted.includes('main@2') && !deleted.includes('main@5'), `deleted ${deleted.join(', ')}`);
  assert.ok(deleted.includes('main@3'), `deleted ${deleted.join(', ')}`);
});
