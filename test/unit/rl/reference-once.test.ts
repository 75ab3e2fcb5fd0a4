/**
 * The frozen reference model is stored once per run, in checkpoint 0 (run/checkpoint.ts): later checkpoints leave it
 * out, retention keeps checkpoint 0 while the run has a reference, a resumed run reads the reference from there and
 * ends bitwise equal to an uninterrupted one, and a run whose checkpoint 0 is gone says so instead of training
 * against the wrong reference.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { resolveConfig } from '../../../src/rl/config.ts';
import { trainEmbedded } from '../../../src/embedded/driver.ts';
import { TINY_SOKOBAN_RESUME } from './tiny-sokoban-config.ts';

// GRPO with a KL term to the reference; retention keeps only the newest checkpoint. So that the reference moves the
// weights: a short warm start makes it differ from the seed's initial weights (where a resumed run's models start),
// k3's gradient depends on it (k1's does not), and steps without reward signal still train (the KL term alone).
const config = resolveConfig({
  preset: 'grpo',
  overrides: [
    ...TINY_SOKOBAN_RESUME,
    ...['klCoef=0.05', 'klEstimator=k3', 'keepLastCheckpoints=1', 'sftSteps=3', 'sftBatchSize=4', 'skipNoSignal=false'],
  ],
});
const scratch = mkdtempSync(join(tmpdir(), 'starpo-reference-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
const [straight, crashed, orphaned] = ['straight', 'crashed', 'orphaned'].map((d) => join(scratch, d));

const checkpointDir = (root: string, iteration: number) =>
  join(root, 'r', 'checkpoints', 'main', String(iteration).padStart(8, '0'));
const files = (root: string, iteration: number) => readdirSync(checkpointDir(root, iteration)).sort();
const actor = (root: string, iteration: number) =>
  readFileSync(join(checkpointDir(root, iteration), 'actor.model.safetensors'));

before(
  async () => {
    await trainEmbedded({ root: straight, runId: 'r', config });
    await trainEmbedded({ root: crashed, runId: 'r', config, stopAfter: 2 });
    await trainEmbedded({ root: orphaned, runId: 'r', config, stopAfter: 2 });
  },
  { timeout: 600_000 },
);

test('checkpoint 0 holds the reference model, later ones leave it out, and retention keeps checkpoint 0', () => {
  assert.ok(files(straight, 0).includes('ref.model.safetensors'), files(straight, 0).join(', '));
  assert.ok(files(straight, 4).includes('actor.model.safetensors'));
  assert.deepEqual(
    files(straight, 4).filter((f) => f.startsWith('ref.')),
    [],
  );
  // keepLastCheckpoints=1: of 1–4 only the newest is left; 0 stays for the reference.
  assert.deepEqual(readdirSync(join(straight, 'r', 'checkpoints', 'main')).sort(), ['00000000', '00000004']);
});

test('a run resumed from a checkpoint without the reference reads it from checkpoint 0: bitwise equal', async () => {
  const resumed = await trainEmbedded({ root: crashed, runId: 'r', resume: true });
  assert.equal(resumed.lastIteration, 4);
  assert.ok(!actor(straight, 0).equals(actor(straight, 4)), 'training must change the weights');
  assert.ok(actor(straight, 4).equals(actor(crashed, 4)), 'final actor weights differ');
});

test('a checkpoint whose run lost checkpoint 0 is refused, naming where the reference was kept', async () => {
  rmSync(checkpointDir(orphaned, 0), { recursive: true });
  await assert.rejects(
    trainEmbedded({ root: orphaned, runId: 'r', resume: true }),
    /checkpoint main@2 of run r keeps its reference model in the run's checkpoint main@0, which is missing/,
  );
  assert.ok(!existsSync(checkpointDir(orphaned, 3)), 'nothing was trained');
});
