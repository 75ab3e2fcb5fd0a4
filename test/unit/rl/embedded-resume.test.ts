import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveConfig } from '../../../src/rl/config.ts';
import { trainEmbedded } from '../../../src/rl/embedded.ts';
import { replay, type IterationEvent } from '../../../src/events/index.ts';
import { localRunEvents } from '../../../src/replay/location.ts';

const config = resolveConfig({
  preset: 'starpo-s',
  overrides: [
    'env=sokoban', 'maxTurns=2', 'envGroups=2', 'groupSize=4', 'miniBatchSize=4', 'iterations=4', 'threads=1',
    'valSeeds=4', 'valEvery=2', 'modelLayers=1', 'modelHidden=32', 'modelFfn=64', 'lrActor=1e-3', 'lrCritic=1e-3',
    'filter=none', 'maxResponseTokens=8',
  ],
});

async function iterationMetrics(root: string, runId: string): Promise<Record<string, number>[]> {
  const reader = localRunEvents(root);
  const out: Record<string, number>[] = [];
  for await (const e of replay(reader, runId)) if (e.kind === 'iteration') out.push((e as IterationEvent).metrics);
  await reader.close();
  return out;
}

const weights = (root: string, runId: string, iteration: number) =>
  readFileSync(join(root, runId, 'checkpoints', 'main', String(iteration).padStart(8, '0'), 'actor.model.safetensors'));

const straight = mkdtempSync(join(tmpdir(), 'starpo-straight-'));
const crashed = mkdtempSync(join(tmpdir(), 'starpo-crashed-'));
const moved = mkdtempSync(join(tmpdir(), 'starpo-moved-'));

// The crash: iteration 3's events are in the log, its checkpoint is not (killed between the two writes).
// Copied under another name before it resumes: the copy must resume as the same run, bitwise.
before(async () => {
  await trainEmbedded({ root: straight, runId: 'r', config });
  await trainEmbedded({ root: crashed, runId: 'r', config, stopAfter: 3 });
  rmSync(join(crashed, 'r', 'checkpoints', 'main', '00000003'), { recursive: true });
  cpSync(join(crashed, 'r'), join(moved, 'renamed'), { recursive: true });
}, { timeout: 900_000 });

test('a run killed after iteration 3\'s events and resumed ends with the weights and metrics of an uninterrupted run', { timeout: 900_000 }, async () => {
  const resumed = await trainEmbedded({ root: crashed, runId: 'r', resume: true });
  assert.equal(resumed.lastIteration, 4);
  assert.ok(!weights(straight, 'r', 3).equals(weights(straight, 'r', 4)), 'training must change the weights');
  assert.ok(weights(straight, 'r', 4).equals(weights(crashed, 'r', 4)), 'final actor weights differ');
  const [a, b] = [await iterationMetrics(straight, 'r'), await iterationMetrics(crashed, 'r')];
  assert.equal(a.length, 4);
  assert.ok(a[3]['actor/grad_norm'] > 0 && a[3]['critic/grad_norm'] > 0);
  assert.deepEqual(b, a);
});

test('the same run copied under another directory name resumes there bitwise equal, each iteration replayed once', { timeout: 900_000 }, async () => {
  const resumed = await trainEmbedded({ root: moved, runId: 'renamed', resume: true });
  assert.equal(resumed.lastIteration, 4);
  assert.ok(weights(straight, 'r', 4).equals(weights(moved, 'renamed', 4)), 'final actor weights differ');
  assert.deepEqual(await iterationMetrics(moved, 'renamed'), await iterationMetrics(straight, 'r'));
});
