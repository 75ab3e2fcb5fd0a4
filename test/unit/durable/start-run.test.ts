import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { resumeLineage } from '../../../activities/start-run.ts';
import { createArtifactStore, lineageKey } from '../../../src/storage/artifacts.ts';
import { savedLineageStarts } from '../../../src/durable/lineages.ts';
import type { RunRef } from '../../../src/durable/protocol.ts';
import type { WorkerResources } from '../../../src/durable/resources.ts';
import type { RunEvent, StarpoEvent } from '../../../src/events/index.ts';
import { CorruptDataError } from '../../../src/errors.ts';
import { resolveConfig } from '../../../src/rl/config.ts';

/** Worker resources whose parent checkpoint load records whether the lineage's start was saved before it. */
function resources(load: () => unknown) {
  const root = mkdtempSync(join(tmpdir(), 'starpo-start-run-'));
  const artifacts = createArtifactStore(pathToFileURL(root).href);
  const events: StarpoEvent[] = [];
  const savedAtLoad: boolean[] = [];
  const r = {
    config: async () => resolveConfig({ overrides: ['env=bandit'] }),
    artifacts: () => artifacts,
    store: (uri: string) => ({ uri, store: {} }),
    events: () => ({ appendOnce: async (e: StarpoEvent[]) => void events.push(...e) }),
    trainModels: {
      use: async (_c: unknown, _s: unknown, _id: unknown, fn: (m: { trainer: unknown }) => Promise<unknown>) => {
        savedAtLoad.push(await artifacts.has(lineageKey('r', 'r1')));
        return fn({ trainer: load() });
      },
    },
  } as unknown as WorkerResources;
  return { r, artifacts, events, savedAtLoad };
}

const run = { runId: 'r', lineageId: 'r1', storeUri: 'unused', events: {} } as unknown as RunRef;
const resume = { parentLineageId: 'main', fromIteration: 4 };

test('a resumed lineage saves its start before it loads the parent checkpoint, then the inherited fork count', async () => {
  const { r, artifacts, events, savedAtLoad } = resources(() => ({ forks: 2, behaviourPolicies: [] }));
  const out = await resumeLineage(r, run, resume);
  assert.deepEqual(savedAtLoad, [true]);
  assert.equal(out.forks, 2);
  assert.equal(out.nextIteration, 5);
  assert.deepEqual(await savedLineageStarts(artifacts, 'r'), [
    { lineageId: 'r1', parentLineageId: 'main', fromIteration: 4, forks: 2 },
  ]);
  const logged = events as RunEvent[];
  assert.deepEqual(
    logged.map((e) => [e.action, e.parentLineageId, e.fromIteration, e.forks]),
    [['RESUMED', 'main', 4, 2]],
  );
});

test('a resume whose parent checkpoint fails to load logs nothing and leaves only the protecting record', async () => {
  const { r, artifacts, events, savedAtLoad } = resources(() => {
    throw new CorruptDataError('checkpoint main@4: weights.bin sha256 mismatch');
  });
  await assert.rejects(resumeLineage(r, run, { ...resume, fork: { reason: 'echo trap', forks: 1 } }), CorruptDataError);
  assert.deepEqual(savedAtLoad, [true]);
  assert.deepEqual(events, []);
  assert.deepEqual(await savedLineageStarts(artifacts, 'r'), [
    { lineageId: 'r1', parentLineageId: 'main', fromIteration: 4, forks: 1 },
  ]);
});
