import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PolicyHandle } from '../../../src/policy/engine/handle.ts';
import { Policy } from '../../../src/policy/engine/policy.ts';
import { exportState } from '../../../src/policy/engine/state.ts';
import { parseModelConfig } from '../../../src/policy/io/config.ts';

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
  batch: 1,
  seqLen: 4,
  tokens: Int32Array.of(1, 2, 3, 4),
  attentionMask: new Float32Array(4).fill(1),
  lossMask: Float32Array.of(0, 1, 1, 1),
};

test('an in-process Policy hands its state over as a PolicyHandle, after the calls issued before', async () => {
  const a: PolicyHandle = new Policy({ config, seed: 1, threads: 1 });
  const b = new Policy({ config, seed: 2, threads: 1 });
  const stepped = a.trainStep(batch, { loss: { kind: 'sft', aggregation: 'token-mean' }, lr: 1e-2 });
  const state = await a.getState(); // issued after the step: sees its weights, moments and step
  assert.equal((await stepped).skipped, 0);
  assert.equal(state.step, 1);
  assert.deepEqual(await b.setState(state), { unused: [] });
  assert.deepEqual(exportState(b), state);
  await Promise.all([a.close(), b.close()]);
});
