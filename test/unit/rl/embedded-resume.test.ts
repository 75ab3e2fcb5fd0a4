import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveConfig } from '../../../src/rl/config.ts';
import { trainEmbedded } from '../../../src/rl/embedded.ts';
import { createLocalEventReader, replay, type IterationEvent } from '../../../src/events/index.ts';

const config = resolveConfig({
  preset: 'starpo-s',
  overrides: [
    'env=sokoban', 'maxTurns=2', 'envGroups=2', 'groupSize=4', 'miniBatchSize=4', 'iterations=4', 'threads=1',
    'valSeeds=4', 'valEvery=2', 'modelLayers=1', 'modelHidden=32', 'modelFfn=64', 'lrActor=1e-3', 'lrCritic=1e-3',
    'filter=none', 'maxResponseTokens=8',
  ],
});

async function iterationMetrics(root: string): Promise<Record<string, number>[]> {
  const reader = createLocalEventReader({ root });
  const out: Record<string, number>[] = [];
  for await (const e of replay(reader, 'r')) if (e.kind === 'iteration') out.push((e as IterationEvent).metrics);
  await reader.close();
  return out;
}

const weights = (root: string, iteration: number) =>
  readFileSync(join(root, 'r', 'checkpoints', 'main', String(iteration).padStart(8, '0'), 'actor.model.safetensors'));

test('a run stopped after iteration 2 and resumed ends with the weights and metrics of an uninterrupted run', { timeout: 900_000 }, async () => {
  const straight = mkdtempSync(join(tmpdir(), 'starpo-straight-'));
  const crashed = mkdtempSync(join(tmpdir(), 'starpo-crashed-'));
  await trainEmbedded({ root: straight, runId: 'r', config });
  await trainEmbedded({ root: crashed, runId: 'r', config, stopAfter: 2 });
  const resumed = await trainEmbedded({ root: crashed, runId: 'r', resume: true });
  assert.equal(resumed.lastIteration, 4);
  assert.ok(!weights(straight, 3).equals(weights(straight, 4)), 'training must change the weights');
  assert.ok(weights(straight, 4).equals(weights(crashed, 4)), 'final actor weights differ');
  const [a, b] = [await iterationMetrics(straight), await iterationMetrics(crashed)];
  assert.equal(a.length, 4);
  assert.ok(a[3]['actor/grad_norm'] > 0 && a[3]['critic/grad_norm'] > 0);
  assert.deepEqual(b, a);
});
