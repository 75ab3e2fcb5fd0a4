import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Policy } from '../../../src/policy/engine/policy.ts';
import { type ModelConfig, parseModelConfig } from '../../../src/policy/io/config.ts';
import { initParams, toNamed } from '../../../src/policy/model/params.ts';
import { rand } from './gradcheck.ts';
import { logSoftmaxRow, referenceLogits } from './reference.ts';

const QWEN = parseModelConfig({
  model_type: 'qwen2',
  vocab_size: 23,
  hidden_size: 24,
  intermediate_size: 40,
  num_hidden_layers: 2,
  num_attention_heads: 6,
  num_key_value_heads: 2,
  rope_theta: 500,
  initializer_range: 0.4,
  tie_word_embeddings: true,
  rms_norm_eps: 1e-5,
});
const LLAMA = parseModelConfig({
  model_type: 'llama',
  vocab_size: 19,
  hidden_size: 16,
  intermediate_size: 20,
  num_hidden_layers: 1,
  num_attention_heads: 2,
  num_key_value_heads: 2,
  initializer_range: 0.4,
  tie_word_embeddings: false,
});

const QWEN3 = parseModelConfig({
  model_type: 'qwen3',
  vocab_size: 21,
  hidden_size: 16,
  intermediate_size: 24,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  head_dim: 6,
  rope_theta: 1000,
  initializer_range: 0.4,
  tie_word_embeddings: true,
});
/** Llama 3.x rope scaling; with E = 16 and an original context of 64 the wavelengths fall in all three bands. */
const LLAMA3 = parseModelConfig({
  model_type: 'llama',
  vocab_size: 19,
  hidden_size: 32,
  intermediate_size: 20,
  num_hidden_layers: 1,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  rope_theta: 500000,
  initializer_range: 0.4,
  tie_word_embeddings: false,
  rope_scaling: {
    rope_type: 'llama3',
    factor: 8,
    low_freq_factor: 1,
    high_freq_factor: 4,
    original_max_position_embeddings: 64,
  },
});

/** Row 0 left-padded, row 1 right-padded, row 2 full. */
const ROWS = [
  { tokens: [0, 0, 0, 5, 9, 2, 17, 4], mask: [0, 0, 0, 1, 1, 1, 1, 1] },
  { tokens: [3, 3, 8, 1, 0, 0, 0, 0], mask: [1, 1, 1, 1, 0, 0, 0, 0] },
  { tokens: [1, 2, 3, 4, 5, 6, 7, 8], mask: [1, 1, 1, 1, 1, 1, 1, 1] },
];

async function maxScoreError(config: ModelConfig): Promise<number> {
  const policy = new Policy({ config, seed: 1, threads: 1, seqMultiple: 8 });
  const params = initParams(policy.layout, 9);
  params.vectors.set(rand(params.vectors.length, 2, 0.5, 1.5)); // non-trivial norm weights and biases
  policy.setParams(params);
  const T = 8;
  const tokens = Int32Array.from(ROWS.flatMap((r) => r.tokens));
  const mask = Float32Array.from(ROWS.flatMap((r) => r.mask));
  const { logprobs } = await policy.score({ batch: ROWS.length, seqLen: T, tokens, attentionMask: mask });
  const named = toNamed(policy.layout, policy.getParams());
  let err = 0;
  ROWS.forEach((r, b) => {
    const lp = referenceLogits(config, named, r.tokens, r.mask).map(logSoftmaxRow);
    for (let t = 1; t < T; t++) {
      if (r.mask[t] && r.mask[t - 1]) err = Math.max(err, Math.abs(lp[t - 1][r.tokens[t]] - logprobs![b * T + t]));
    }
  });
  await policy.close();
  return err;
}

const CASES: [string, ModelConfig][] = [
  ['Qwen2 (GQA, qkv bias, tied embeddings, padding)', QWEN],
  ['Llama (no bias, untied lm_head)', LLAMA],
  ['Qwen3 (q/k RMSNorm per head, head_dim independent of hidden/heads)', QWEN3],
  ['Llama 3 (rope_scaling llama3)', LLAMA3],
];
for (const [name, config] of CASES) {
  test(`${name} log-probs match a plain HF-semantics reference`, async () => {
    const err = await maxScoreError(config);
    assert.ok(err < 1e-4, `max |Δ log p| = ${err}`);
  });
}
