import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveConfig } from '../../../src/rl/config.ts';
import { trainEmbedded } from '../../../src/embedded/driver.ts';
import { TINY_SOKOBAN_RESUME } from './tiny-sokoban-config.ts';
import { createLocalEventReader, replay, type StarpoEvent } from '../../../src/events/index.ts';
import { createLocalCheckpointStore } from '../../../src/storage/index.ts';

const config = resolveConfig({ preset: 'starpo-s', overrides: [...TINY_SOKOBAN_RESUME, 'keepLastCheckpoints=3'] });

async function readAll(root: string, surviving: boolean): Promise<StarpoEvent[]> {
  const reader = createLocalEventReader({ root });
  const out: StarpoEvent[] = [];
  const source = surviving ? replay(reader, 'r') : reader.read('r');
  for await (const e of source) out.push(e);
  await reader.close();
  return out;
}

const weights = (root: string, lineage: string, iteration: number) =>
  readFileSync(join(root, 'r', 'checkpoints', lineage, String(iteration).padStart(8, '0'), 'actor.model.safetensors'));

const SLOW = { timeout: 300_000 };

test('a fork from iteration 2 replays as main 1-2 and r1 3-4, equal to the originals', SLOW, async () => {
  const root = mkdtempSync(join(tmpdir(), 'starpo-lineage-'));
  await trainEmbedded({ root, runId: 'r', config });
  const forked = await trainEmbedded({ root, runId: 'r', fork: { fromIteration: 2 } });
  assert.deepEqual([forked.lineageId, forked.lastIteration], ['r1', 4]);

  const kept = (await readAll(root, true)).filter((e) => e.kind === 'iteration');
  assert.deepEqual(
    kept.map((e) => `${e.lineageId}@${e.iteration}`),
    ['main@1', 'main@2', 'r1@3', 'r1@4'],
  );
  const all = await readAll(root, false);
  const run = all.filter((e) => e.kind === 'run').at(-1)!;
  assert.deepEqual(run.kind === 'run' && [run.action, run.parentLineageId, run.fromIteration], ['RESUMED', 'main', 2]);
  const metrics = (lineage: string, i: number) =>
    all.find((e) => e.kind === 'iteration' && e.lineageId === lineage && e.iteration === i)!;
  for (const i of [3, 4]) {
    const [a, b] = [metrics('main', i), metrics('r1', i)];
    assert.deepEqual(b.kind === 'iteration' && b.metrics, a.kind === 'iteration' && a.metrics);
    assert.ok(weights(root, 'main', i).equals(weights(root, 'r1', i)), `actor weights differ at ${i}`);
  }
  const trajectories = (await readAll(root, true)).filter((e) => e.kind === 'trajectory' && e.split === 'train');
  assert.equal(trajectories.length, 4 * 8, "each iteration's 8 trajectories exactly once");
  const checkpoints = await createLocalCheckpointStore({ root }).list('r');
  const names = checkpoints.map((c) => `${c.lineageId}@${c.iteration}`);
  assert.deepEqual(names, ['main@2', 'main@3', 'main@4', 'r1@3', 'r1@4']);
});

test('a later plain --resume continues the surviving lineage, not main', SLOW, async () => {
  const root = mkdtempSync(join(tmpdir(), 'starpo-lineage-'));
  await trainEmbedded({ root, runId: 'r', config, stopAfter: 3 });
  await trainEmbedded({ root, runId: 'r', fork: { fromIteration: 1 }, stopAfter: 2 });
  const resumed = await trainEmbedded({ root, runId: 'r', resume: true });
  assert.deepEqual([resumed.lineageId, resumed.lastIteration], ['r1', 4]);
  const kept = (await readAll(root, true)).filter((e) => e.kind === 'iteration');
  assert.deepEqual(
    kept.map((e) => `${e.lineageId}@${e.iteration}`),
    ['main@1', 'r1@2', 'r1@3', 'r1@4'],
  );
});
