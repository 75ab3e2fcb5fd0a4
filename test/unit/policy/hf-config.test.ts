import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../../src/errors.ts';
import { hfParameterNames, parseModelConfig, writeModelConfig } from '../../../src/policy/io/config.ts';

/** Qwen2.5-0.5B's config.json, as published. */
const QWEN25_05B = `{
  "architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 151643, "eos_token_id": 151643,
  "hidden_act": "silu", "hidden_size": 896, "initializer_range": 0.02, "intermediate_size": 4864,
  "max_position_embeddings": 32768, "max_window_layers": 24, "model_type": "qwen2", "num_attention_heads": 14,
  "num_hidden_layers": 24, "num_key_value_heads": 2, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
  "sliding_window": 32768, "tie_word_embeddings": true, "torch_dtype": "bfloat16", "transformers_version": "4.40.1",
  "use_cache": true, "use_sliding_window": false, "vocab_size": 151936
}`;

test('parses the Qwen2.5-0.5B config.json', () => {
  const c = parseModelConfig(QWEN25_05B);
  assert.deepEqual(c, {
    modelType: 'qwen2',
    vocabSize: 151936,
    hiddenSize: 896,
    intermediateSize: 4864,
    numLayers: 24,
    numHeads: 14,
    numKvHeads: 2,
    headDim: 64,
    rmsNormEps: 1e-6,
    ropeTheta: 1e6,
    maxPositionEmbeddings: 32768,
    tieWordEmbeddings: true,
    attentionBias: true,
    hiddenAct: 'silu',
    initializerRange: 0.02,
    bosTokenId: 151643,
    eosTokenIds: [151643],
  });
  assert.ok(Object.isFrozen(c));
});

test('the Qwen2.5-0.5B tensor table has 290 tensors and 494,032,768 parameters', () => {
  const names = hfParameterNames(parseModelConfig(QWEN25_05B));
  assert.equal(names.length, 290);
  assert.equal(
    names.reduce((n, p) => n + p.shape.reduce((a, b) => a * b, 1), 0),
    494_032_768,
  );
  assert.deepEqual(names.slice(0, 5), [
    { name: 'model.embed_tokens.weight', shape: [151936, 896] },
    { name: 'model.layers.0.input_layernorm.weight', shape: [896] },
    { name: 'model.layers.0.self_attn.q_proj.weight', shape: [896, 896] },
    { name: 'model.layers.0.self_attn.q_proj.bias', shape: [896] },
    { name: 'model.layers.0.self_attn.k_proj.weight', shape: [128, 896] },
  ]);
  assert.deepEqual(names.at(-1), { name: 'model.norm.weight', shape: [896] });
});

test('llama defaults: no bias, kv heads = heads, untied lm_head', () => {
  const c = parseModelConfig({
    model_type: 'llama',
    vocab_size: 10,
    hidden_size: 8,
    intermediate_size: 16,
    num_hidden_layers: 1,
    num_attention_heads: 2,
  });
  assert.equal(c.numKvHeads, 2);
  assert.equal(c.attentionBias, false);
  assert.equal(c.maxPositionEmbeddings, 2048);
  const names = hfParameterNames(c).map((p) => p.name);
  assert.equal(names.filter((n) => n.endsWith('.bias')).length, 0);
  assert.deepEqual(hfParameterNames(c).at(-1), { name: 'lm_head.weight', shape: [10, 8] });
  assert.deepEqual(hfParameterNames(c).find((p) => p.name.endsWith('down_proj.weight'))?.shape, [8, 16]);
});

test('writeModelConfig round-trips through parseModelConfig', () => {
  const c = parseModelConfig(QWEN25_05B);
  assert.deepEqual(parseModelConfig(writeModelConfig(c)), c);
  const written = JSON.parse(writeModelConfig(c));
  assert.deepEqual(written.architectures, ['Qwen2ForCausalLM']);
  assert.equal(written.eos_token_id, 151643);
});

function assertField(json: Record<string, unknown>, field: string, message: RegExp): void {
  const base = JSON.parse(QWEN25_05B);
  assert.throws(
    () => parseModelConfig({ ...base, ...json }),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.equal(err.field, field);
      assert.match(err.message, message);
      return true;
    },
  );
}

test('bad configs name the offending field', () => {
  assertField({ hidden_size: 900 }, 'hidden_size', /900 is not divisible by num_attention_heads 14/);
  assertField({ num_key_value_heads: 3 }, 'num_key_value_heads', /3 does not divide num_attention_heads 14/);
  assertField({ vocab_size: undefined }, 'vocab_size', /is required/);
  assertField({ intermediate_size: 1.5 }, 'intermediate_size', /not a positive integer/);
  assertField({ model_type: 'gpt2' }, 'model_type', /"gpt2" is not qwen2 or llama/);
  assertField({ hidden_act: 'gelu' }, 'hidden_act', /only silu/);
  assertField({ rms_norm_eps: -1 }, 'rms_norm_eps', /not a positive number/);
  assertField({ attention_bias: false }, 'attention_bias', /Qwen2 always has q\/k\/v bias/);
  assertField({ rope_scaling: { type: 'yarn' } }, 'rope_scaling', /not supported/);
  assertField({ head_dim: 63 }, 'head_dim', /must be even/);
  assertField({ tie_word_embeddings: 'yes' }, 'tie_word_embeddings', /not a boolean/);
});

test('an explicit head_dim need not divide hidden_size', () => {
  const c = parseModelConfig({ ...JSON.parse(QWEN25_05B), hidden_size: 900, head_dim: 32 });
  assert.equal(c.headDim, 32);
  assert.deepEqual(hfParameterNames(c)[2], { name: 'model.layers.0.self_attn.q_proj.weight', shape: [448, 900] });
});
