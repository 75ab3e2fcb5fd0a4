import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PolicyEngine } from '../../../src/policy/engine/engine.ts';
import { Policy } from '../../../src/policy/engine/policy.ts';
import { exportState } from '../../../src/policy/engine/state.ts';
import { parseModelConfig } from '../../../src/policy/io/config.ts';
import { buildLayout, paramCount } from '../../../src/policy/model/layout.ts';
import type { LoraSpec } from '../../../src/policy/model/lora.ts';
import { toNamed } from '../../../src/policy/model/params.ts';
import { STARPO_S_PPO } from '../../../src/policy/programs/loss.ts';

const config = parseModelConfig({
  model_type: 'qwen2',
  vocab_size: 10,
  hidden_size: 16,
  intermediate_size: 32,
  num_hidden_layers: 1,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  initializer_range: 0.3,
});
const lora: LoraSpec = { rank: 2, alpha: 4, dropout: 0, targets: ['q', 'k', 'v', 'down'] };
const batch = {
  batch: 1,
  seqLen: 4,
  tokens: Int32Array.of(3, 4, 5, 6),
  attentionMask: new Float32Array(4).fill(1),
  lossMask: Float32Array.of(0, 1, 1, 1),
  advantages: Float32Array.of(0, 1, -1, 0.5),
  oldLogprobs: new Float32Array(4).fill(-2.3),
};

test('the worker engine takes a LoRA base, runs trainStep and returns the same metrics and adapter state as the in-process policy', async () => {
  const plain = new Policy({ config, seed: 9 });
  const base = new Map(Object.entries(toNamed(plain.layout, plain.getParams())));
  const engine = await PolicyEngine.start({ config, seed: 5, threads: 1, lora });
  const local = new Policy({ config, seed: 5, threads: 1, lora });
  assert.deepEqual(await engine.setBase(base), local.setBase(base));
  for (let i = 0; i < 2; i++)
    assert.deepEqual(
      await engine.trainStep(batch, { loss: STARPO_S_PPO, lr: 0.01 }),
      await local.trainStep(batch, { loss: STARPO_S_PPO, lr: 0.01 }),
    );
  assert.deepEqual(await engine.getState(), exportState(local));
  const info = await engine.info();
  // r·(in + out): q 2·(16 + 16), k and v 2·(16 + 8), down 2·(32 + 16); the base is the whole plain model.
  assert.deepEqual([info.paramCount, info.frozenParamCount], [64 + 48 + 48 + 96, paramCount(buildLayout(config))]);
  const req = { prompts: [[3, 4], [5]], maxNewTokens: 4, sampling: { temperature: 1 }, seed: 2 };
  assert.deepEqual(await engine.generate(req), await local.generate(req));
  await engine.close();
  await local.close();
});
