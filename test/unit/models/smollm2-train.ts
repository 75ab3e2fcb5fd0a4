/**
 * The real SmolLM2-135M-Instruct trained by the embedded driver from `--model smollm2-135m-instruct` (the
 * packaged name, resolved through the cache): stopped after iteration 1 and resumed, a run must end bitwise equal to
 * an uninterrupted one; the trained actor exports as a model directory that `--model` loads again. One test file per
 * kind of fine-tuning (smollm2-train-full, smollm2-train-lora), so the two can run side by side.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { getNamedModel } from '../../../src/models/named.ts';
import { openModelDirectory } from '../../../src/policy/io/model-dir.ts';
import { resolveConfig } from '../../../src/rl/config.ts';
import { trainEmbedded } from '../../../src/embedded/driver.ts';
import { exportCheckpoint } from '../../../src/run/export.ts';
import type { CheckpointManifest } from '../../../src/storage/types.ts';

await getNamedModel('smollm2-135m-instruct');
const scratch = mkdtempSync(join(tmpdir(), 'starpo-smollm2-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * Bandit, 2 iterations of 1 group × 2, 6-token answers, one thread (bitwise). The compact prompt: what is proven here
 * does not depend on the words, and RAGEN's full one doubles every sequence the update trains on (94 → 78 s a case).
 */
const SMALL = [
  'model=smollm2-135m-instruct',
  'env=bandit',
  'template=compact',
  'iterations=2',
  'envGroups=1',
  'groupSize=2',
  'maxResponseTokens=6',
  'miniBatchSize=2',
  'valSeeds=1',
  'valEvery=1',
  'checkpointEvery=1',
  'keepLastCheckpoints=1', // a full checkpoint is 1.6 GB (2.2 with the reference): CI disks are not always roomy
  'modelContext=512',
  'threads=1',
  'advantage=grpo',
  'critic=false',
  'lrActor=1e-5',
  'skipNoSignal=false', // every reward is the format penalty: without this no step would train
];

const WEIGHTS = 'actor.model.safetensors';
const STATE = 'actor.training_state.safetensors';

/** A checkpoint file's sha256 as the store's manifest lists it (hashed when saved, checked whenever loaded). */
const digest = (root: string, iteration: number, name: string): string => {
  const dir = join(root, 'r', 'checkpoints', 'main', String(iteration).padStart(8, '0'));
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as CheckpointManifest;
  return manifest.files.find((f) => f.name === name)!.sha256;
};

/**
 * The test body of one kind of fine-tuning (`extra` overrides on top of SMALL). Each test file declares its own test
 * with it, so the test runner (and the suite's timing reporter) places the test in that file.
 */
export async function resumesBitwise(extra: readonly string[]): Promise<void> {
  const config = resolveConfig({ overrides: [...SMALL, ...extra] });
  assert.equal(config.model, 'smollm2-135m-instruct', 'the config keeps the name, not a machine path');
  // One run's files on disk at a time: the straight run is reduced to digests before the crashed one starts.
  const straight = mkdtempSync(join(scratch, 'straight-'));
  await trainEmbedded({ root: straight, runId: 'r', config });
  const expected = [WEIGHTS, STATE].map((f) => digest(straight, 2, f));
  const out = join(scratch, 'export');
  await exportCheckpoint({ checkpoint: join(straight, 'r'), out });
  rmSync(straight, { recursive: true, force: true });
  const exported = await openModelDirectory(out);
  assert.equal(exported.config.numLayers, 30);
  assert.match(exported.assets['tokenizer_config.json']!, /chat_template/);
  rmSync(out, { recursive: true, force: true });

  const crashed = mkdtempSync(join(scratch, 'crashed-'));
  await trainEmbedded({ root: crashed, runId: 'r', config, stopAfter: 1 });
  assert.notEqual(digest(crashed, 1, WEIGHTS), expected[0], 'iteration 2 changed no weight');
  await trainEmbedded({ root: crashed, runId: 'r', resume: true });
  assert.deepEqual(
    [WEIGHTS, STATE].map((f) => digest(crashed, 2, f)),
    expected,
    'the resumed run differs from the straight one (weights, training state)',
  );
  rmSync(crashed, { recursive: true, force: true });
}
