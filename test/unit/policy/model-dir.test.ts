import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ConfigError } from '../../../src/errors.ts';
import { openModelDirectory, weightsFingerprint } from '../../../src/policy/io/model-dir.ts';
import type { Tensor } from '../../../src/policy/io/dtype.ts';
import { readSafetensors, writeSafetensors } from '../../../src/policy/io/safetensors.ts';

const FIXTURES = new URL('../../fixtures/hf-models/', import.meta.url).pathname;
const scratch = await mkdtemp(join(tmpdir(), 'starpo-model-dir-'));
after(() => rm(scratch, { recursive: true, force: true }));

/** A copy of a fixture directory to damage. */
async function copyOf(name: string): Promise<string> {
  const dir = await mkdtemp(join(scratch, `${name}-`));
  await cp(FIXTURES + name, dir, { recursive: true });
  return dir;
}

async function rejects(dir: string, field: string, message: RegExp): Promise<void> {
  await assert.rejects(openModelDirectory(dir), (err: unknown) => {
    assert.ok(err instanceof ConfigError, String(err));
    assert.equal(err.field, field);
    assert.match(err.message, message);
    assert.ok(!err.message.includes('\n'), 'one line');
    return true;
  });
}

test('opens a sharded transformers directory: config, generation eos ids, weight files', async () => {
  const m = await openModelDirectory(FIXTURES + 'llama3-tiny-sharded');
  assert.equal(m.config.modelType, 'llama');
  assert.deepEqual(m.eosTokenIds, [94, 95]);
  assert.equal(m.weightFiles.length, 4);
  assert.ok(m.weightFiles.includes('model.safetensors.index.json'));
  assert.equal((await m.readWeights()).size, 2 + 2 * 9 + 1);
  assert.match(await weightsFingerprint(m), /^[0-9a-f]{64}$/);
});

test('a missing directory, config.json or weight file is a one-line error naming it', async () => {
  await rejects(join(scratch, 'nope'), 'model', /is not a directory/);
  const empty = await mkdtemp(join(scratch, 'empty-'));
  await rejects(empty, 'model', /has no config\.json/);
  const noWeights = await copyOf('qwen3-tiny');
  await rm(join(noWeights, 'model.safetensors'));
  await rejects(noWeights, 'model', /has no model\.safetensors or model\.safetensors\.index\.json/);
});

test('a weight missing, misshapen or unexplained is an error naming the tensor', async () => {
  const dir = await copyOf('qwen3-tiny');
  const file = join(dir, 'model.safetensors');
  const { tensors } = await readSafetensors(file);
  const edit = async (change: (t: Map<string, Tensor>) => void) => {
    const copy = new Map(tensors);
    change(copy);
    await writeSafetensors(file, copy, { format: 'pt' });
  };
  await edit((t) => t.delete('model.layers.1.self_attn.k_norm.weight'));
  await rejects(dir, 'model.layers.1.self_attn.k_norm.weight', /is missing/);
  await edit((t) => t.set('model.norm.weight', { dtype: 'F32', shape: [31], data: new Float32Array(31) }));
  await rejects(dir, 'model.norm.weight', /has shape \[31\].*implies \[32\]/);
  await edit((t) => t.set('lm_head.weight', { dtype: 'F32', shape: [96, 32], data: new Float32Array(96 * 32) }));
  await rejects(dir, 'lm_head.weight', /tie_word_embeddings: true/);
});

test('a config.json field starpo does not implement is refused before any weight is read', async () => {
  const dir = await copyOf('qwen2-tiny');
  const config = JSON.parse(await readFile(join(dir, 'config.json'), 'utf8'));
  await writeFile(
    join(dir, 'config.json'),
    JSON.stringify({ ...config, quantization_config: { quant_method: 'gptq' } }),
  );
  await rejects(dir, 'quantization_config', /not understood by starpo/);
  await writeFile(join(dir, 'config.json'), JSON.stringify({ ...config, model_type: 'mistral' }));
  await rejects(dir, 'model_type', /"mistral" is not one of qwen2, qwen3, llama/);
});
