import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CorruptDataError } from '../../../src/errors.ts';
import type { Tensor } from '../../../src/policy/io/dtype.ts';
import { readModelWeights, writeModelWeights } from '../../../src/policy/io/sharded.ts';
import { readSafetensors } from '../../../src/policy/io/safetensors.ts';
import { sha256File } from '../../../src/storage/hash.ts';

const f32 = (...v: number[]): Tensor => ({ dtype: 'F32', shape: [v.length], data: new Float32Array(v) });
const WEIGHTS: [string, Tensor][] = [
  ['a', f32(1, 2)],
  ['b', f32(3, 4)],
  ['c', f32(5)],
];

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'starpo-sh-'));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('small weights go to one model.safetensors with format pt', async () => {
  await withDir(async (dir) => {
    assert.deepEqual([...(await writeModelWeights(dir, WEIGHTS)).keys()], ['model.safetensors']);
    assert.deepEqual((await readSafetensors(join(dir, 'model.safetensors'))).metadata, { format: 'pt' });
    assert.deepEqual(await readModelWeights(dir), new Map(WEIGHTS));
  });
});

test('weights beyond the shard size are split and indexed like save_pretrained', async () => {
  await withDir(async (dir) => {
    const files = [...(await writeModelWeights(dir, WEIGHTS, { maxShardBytes: 8 })).keys()];
    assert.deepEqual(files, [
      'model-00001-of-00003.safetensors',
      'model-00002-of-00003.safetensors',
      'model-00003-of-00003.safetensors',
      'model.safetensors.index.json',
    ]);
    const index = JSON.parse(await readFile(join(dir, 'model.safetensors.index.json'), 'utf8'));
    assert.deepEqual(index, {
      metadata: { total_size: 20 },
      weight_map: {
        a: 'model-00001-of-00003.safetensors',
        b: 'model-00002-of-00003.safetensors',
        c: 'model-00003-of-00003.safetensors',
      },
    });
    assert.deepEqual(await readModelWeights(dir), new Map(WEIGHTS));
  });
});

test('each file comes back with the SHA-256 of its bytes, hashed as written (tensors of several chunks too)', async () => {
  const big = (n: number) => Float32Array.from({ length: n }, (_, i) => Math.sin(i));
  const weights: [string, Tensor][] = [
    ['wide', { dtype: 'F32', shape: [3, 500_000], data: big(1_500_000) }], // 1 << 20 elements a chunk
    ['half', { dtype: 'F16', shape: [1_200_000], data: big(1_200_000) }], // narrowed chunk by chunk
    ...WEIGHTS,
  ];
  for (const maxShardBytes of [5e9, 8]) {
    await withDir(async (dir) => {
      const written = await writeModelWeights(dir, weights, { maxShardBytes });
      assert.equal(written.size, maxShardBytes === 8 ? 6 : 1);
      for (const [name, sha256] of written) assert.equal(sha256, await sha256File(join(dir, name)), name);
    });
  }
});

test('an index naming a tensor its shard lacks is corrupt', async () => {
  await withDir(async (dir) => {
    await writeModelWeights(dir, WEIGHTS, { maxShardBytes: 8 });
    const index = { weight_map: { a: 'model-00002-of-00003.safetensors' } };
    await writeFile(join(dir, 'model.safetensors.index.json'), JSON.stringify(index));
    await assert.rejects(readModelWeights(dir), CorruptDataError);
  });
});

test('an index pointing outside the directory is corrupt', async () => {
  await withDir(async (dir) => {
    await writeFile(
      join(dir, 'model.safetensors.index.json'),
      JSON.stringify({ weight_map: { a: '../x.safetensors' } }),
    );
    await assert.rejects(readModelWeights(dir), /weight_map\.a is not a shard file name/);
    assert.deepEqual((await readdir(dir)).length, 1);
  });
});
