import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Policy } from '../../../src/policy/engine/policy.ts';
import { exportState, importState } from '../../../src/policy/engine/state.ts';
import { loadCheckpoint, saveCheckpoint } from '../../../src/policy/io/checkpoint.ts';
import { parseModelConfig } from '../../../src/policy/io/config.ts';
import { DEFAULT_VALUE_LOSS } from '../../../src/policy/programs/loss.ts';

const config = parseModelConfig({
  model_type: 'llama',
  vocab_size: 12,
  hidden_size: 16,
  intermediate_size: 24,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
});
const batch = {
  batch: 2,
  seqLen: 5,
  tokens: Int32Array.of(1, 2, 3, 4, 5, 6, 7, 8, 9, 10),
  attentionMask: new Float32Array(10).fill(1),
  lossMask: Float32Array.of(0, 1, 1, 1, 1, 0, 1, 1, 1, 1),
};

test('a trained policy saved with saveCheckpoint loads back into an identical policy', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'starpo-state-'));
  try {
    const a = new Policy({ config, seed: 3, threads: 1 });
    await a.trainStep(batch, { loss: { kind: 'sft', aggregation: 'token-mean' }, lr: 0.01 });
    await saveCheckpoint(dir, { config, ...exportState(a), rng: {}, tokenizerFiles: {} });
    const b = new Policy({ config, seed: 99, threads: 1 });
    const ckpt = await loadCheckpoint(dir);
    assert.deepEqual(importState(b, ckpt), { unused: [] });
    assert.equal(b.step, 1);
    assert.deepEqual(b.getParams(), a.getParams());
    assert.deepEqual(b.getMoments(), a.getMoments());
    await Promise.all([a.close(), b.close()]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a critic starts from an actor checkpoint (value head kept, lm_head unused) and learns returns', async () => {
  const actor = new Policy({ config, seed: 3, threads: 1 });
  const critic = new Policy({ config, role: 'critic', seed: 4, threads: 1 });
  assert.deepEqual(importState(critic, exportState(actor, false)).unused, ['lm_head.weight']);
  const returns = Float32Array.from({ length: 10 }, (_, i) => (i % 5) / 4);
  const train = { ...batch, returns, oldValues: new Float32Array(10) };
  const first = await critic.trainStep(train, { loss: { ...DEFAULT_VALUE_LOSS, clip: 100 }, lr: 0.02 });
  let last = first;
  for (let i = 0; i < 60; i++)
    last = await critic.trainStep(train, { loss: { ...DEFAULT_VALUE_LOSS, clip: 100 }, lr: 0.02 });
  assert.ok(last.value_loss < first.value_loss / 20, `value loss ${first.value_loss} → ${last.value_loss}`);
  const { values } = await critic.score(batch);
  assert.ok(Math.abs(values![3] - returns[3]) < 0.1, `value ${values![3]} for return ${returns[3]}`);
  await Promise.all([actor.close(), critic.close()]);
});
