import { test } from 'node:test';
import { createHash } from 'node:crypto';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CorruptDataError } from '../../../src/errors.ts';
import { loadCheckpoint, saveCheckpoint, type TrainingCheckpoint } from '../../../src/policy/io/checkpoint.ts';
import { hfParameterNames, parseModelConfig } from '../../../src/policy/io/config.ts';
import type { Tensor } from '../../../src/policy/io/dtype.ts';

const CONFIG = parseModelConfig({
  model_type: 'qwen2',
  vocab_size: 6,
  hidden_size: 4,
  intermediate_size: 8,
  num_hidden_layers: 1,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  tie_word_embeddings: true,
});

function filled(shape: readonly number[], start: number): Tensor {
  const n = shape.reduce((a, b) => a * b, 1);
  return { dtype: 'F32', shape, data: Float32Array.from({ length: n }, (_, i) => start + i / 8) };
}

function checkpoint(): TrainingCheckpoint {
  const names = hfParameterNames(CONFIG);
  const weights = new Map(names.map((p, i) => [p.name, filled(p.shape, i)] as const));
  return {
    config: CONFIG,
    weights,
    optimizer: {
      m: new Map(names.map((p, i) => [p.name, filled(p.shape, -i)] as const)),
      v: new Map(names.map((p, i) => [p.name, filled(p.shape, 100 + i)] as const)),
    },
    step: 42,
    rng: { sampling: '0123456789abcdef0123456789abcdef' },
    tokenizerFiles: { 'tokenizer.json': '{"model":{}}', 'tokenizer_config.json': '{}' },
    metadata: { run: 'r1', iteration: '3' },
  };
}

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'starpo-ck-'));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('a checkpoint round-trips weights, moments, step, rng, config and tokenizer files', async () => {
  await withDir(async (dir) => {
    const saved = checkpoint();
    await saveCheckpoint(dir, saved);
    assert.deepEqual((await readdir(dir)).sort(), [
      'config.json',
      'manifest.json',
      'model.safetensors',
      'tokenizer.json',
      'tokenizer_config.json',
      'training_state.safetensors',
    ]);
    assert.deepEqual(await loadCheckpoint(dir), saved);
  });
});

test('sharded weights round-trip and replace an earlier single-file save', async () => {
  await withDir(async (dir) => {
    await saveCheckpoint(dir, checkpoint());
    const saved = { ...checkpoint(), optimizer: null, step: 43 };
    await saveCheckpoint(dir, saved, { maxShardBytes: 200 });
    const files = await readdir(dir);
    assert.ok(!files.includes('model.safetensors') && files.includes('model.safetensors.index.json'));
    assert.deepEqual(await loadCheckpoint(dir), saved);
  });
});

test('a flipped byte in any file is refused', async () => {
  await withDir(async (dir) => {
    await saveCheckpoint(dir, checkpoint());
    for (const name of ['model.safetensors', 'training_state.safetensors', 'config.json', 'tokenizer.json']) {
      const path = join(dir, name);
      const original = await readFile(path);
      const flipped = Buffer.from(original);
      flipped[flipped.length - 1] ^= 0x01;
      await writeFile(path, flipped);
      await assert.rejects(loadCheckpoint(dir), (err: unknown) => {
        assert.ok(err instanceof CorruptDataError);
        assert.match(err.message, new RegExp(`${name.replace('.', '\\.')} fails its sha256 check`));
        return true;
      });
      await writeFile(path, original);
    }
    assert.equal((await loadCheckpoint(dir)).step, 42);
  });
});

test("save returns the manifest's digests; a load told a file was verified against another digest still hashes it", async () => {
  await withDir(async (dir) => {
    const digests = await saveCheckpoint(dir, checkpoint());
    const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as {
      files: Record<string, { sha256: string }>;
    };
    assert.deepEqual(
      Object.fromEntries(digests),
      Object.fromEntries(Object.entries(manifest.files).map(([n, f]) => [n, f.sha256])),
    );
    const path = join(dir, 'model.safetensors');
    const flipped = await readFile(path);
    flipped[flipped.length - 1] ^= 0x01;
    await writeFile(path, flipped);
    const stale = new Map([['model.safetensors', createHash('sha256').update(flipped).digest('hex')]]);
    await assert.rejects(loadCheckpoint(dir, stale), /model\.safetensors fails its sha256 check/);
    // A digest equal to the manifest's is the caller's word that these bytes were checked (a store's download).
    const vouched = new Map([['model.safetensors', digests.get('model.safetensors')!]]);
    assert.equal((await loadCheckpoint(dir, vouched)).step, 42);
  });
});

test('a directory without a manifest is an incomplete checkpoint', async () => {
  await withDir(async (dir) => {
    await saveCheckpoint(dir, checkpoint());
    await rm(join(dir, 'manifest.json'));
    await assert.rejects(loadCheckpoint(dir), /no manifest\.json \(missing or incomplete checkpoint\)/);
  });
});

test('a truncated file is refused by its size', async () => {
  await withDir(async (dir) => {
    await saveCheckpoint(dir, checkpoint());
    const path = join(dir, 'model.safetensors');
    await writeFile(path, (await readFile(path)).subarray(0, 100));
    await assert.rejects(loadCheckpoint(dir), /model\.safetensors is 100 bytes, manifest says \d+/);
  });
});
