import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../../src/errors.ts';
import { hfParameterNames, parseModelConfig, writeModelConfig } from '../../../src/policy/io/config.ts';
import { QWEN25_05B_CONFIG, QWEN3_06B_CONFIG } from '../../../src/policy/io/published-configs.ts';
import { inverseFrequencies } from '../../../src/policy/io/rope-scaling.ts';

/** Qwen2.5-0.5B's config.json as text, as a model directory holds it. */
const QWEN25_05B = JSON.stringify(QWEN25_05B_CONFIG, null, 2);

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
    ropeScaling: null,
    maxPositionEmbeddings: 32768,
    tieWordEmbeddings: true,
    attentionBias: true,
    qkNorm: false,
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
  assertField({ model_type: 'gpt2' }, 'model_type', /"gpt2" is not one of qwen2, qwen3, llama/);
  assertField({ hidden_act: 'gelu' }, 'hidden_act', /only silu/);
  assertField({ rms_norm_eps: -1 }, 'rms_norm_eps', /not a positive number/);
  assertField({ attention_bias: false }, 'attention_bias', /Qwen2 always has q\/k\/v bias/);
  assertField({ rope_scaling: { type: 'yarn', factor: 4 } }, 'rope_scaling.rope_type', /"yarn" is not supported/);
  assertField({ rope_scaling: { rope_type: 'llama3', factor: 8 } }, 'rope_scaling.low_freq_factor', /not a number > 0/);
  assertField({ rope_scaling: { rope_type: 'default', mscale: 2 } }, 'rope_scaling.mscale', /not supported/);
  assertField({ quantization_config: { bits: 4 } }, 'quantization_config', /not understood by starpo/);
  assertField({ auto_map: { AutoModel: 'x.Y' } }, 'auto_map', /not understood by starpo/);
  assertField({ architectures: ['Qwen3ForCausalLM'] }, 'architectures', /is not \["Qwen2ForCausalLM"\]/);
  assertField({ use_sliding_window: true }, 'use_sliding_window', /not supported/);
  assertField({ layer_types: ['sliding_attention'] }, 'layer_types', /only full_attention/);
  assertField({ attention_dropout: 0.1 }, 'attention_dropout', /must be 0/);
  assertField({ head_dim: 63 }, 'head_dim', /must be even/);
  assertField({ tie_word_embeddings: 'yes' }, 'tie_word_embeddings', /not a boolean/);
});

test('an explicit head_dim need not divide hidden_size', () => {
  const c = parseModelConfig({ ...JSON.parse(QWEN25_05B), hidden_size: 900, head_dim: 32 });
  assert.equal(c.headDim, 32);
  assert.deepEqual(hfParameterNames(c)[2], { name: 'model.layers.0.self_attn.q_proj.weight', shape: [448, 900] });
});

const QWEN3_06B = QWEN3_06B_CONFIG;

test('parses Qwen3-0.6B: head_dim 128 beside hidden 1024 / 16 heads, q/k norms, no bias; 596M parameters', () => {
  const c = parseModelConfig(QWEN3_06B);
  assert.equal(c.modelType, 'qwen3');
  assert.equal(c.headDim, 128);
  assert.equal(c.qkNorm, true);
  assert.equal(c.attentionBias, false);
  const names = hfParameterNames(c);
  assert.deepEqual(
    names.slice(1, 8).map((p) => [p.name.slice(15), p.shape]),
    [
      ['input_layernorm.weight', [1024]],
      ['self_attn.q_proj.weight', [2048, 1024]],
      ['self_attn.k_proj.weight', [1024, 1024]],
      ['self_attn.v_proj.weight', [1024, 1024]],
      ['self_attn.o_proj.weight', [1024, 2048]],
      ['self_attn.q_norm.weight', [128]],
      ['self_attn.k_norm.weight', [128]],
    ],
  );
  assert.equal(
    names.reduce((n, p) => n + p.shape.reduce((a, b) => a * b, 1), 0),
    596_049_920,
  );
  assert.deepEqual(parseModelConfig(writeModelConfig(c)), c);
});

/** Llama-3.2-1B-Instruct's config.json, as published. */
const LLAMA32_1B = {
  architectures: ['LlamaForCausalLM'],
  attention_bias: false,
  attention_dropout: 0.0,
  bos_token_id: 128000,
  eos_token_id: [128001, 128008, 128009],
  head_dim: 64,
  hidden_act: 'silu',
  hidden_size: 2048,
  initializer_range: 0.02,
  intermediate_size: 8192,
  max_position_embeddings: 131072,
  mlp_bias: false,
  model_type: 'llama',
  num_attention_heads: 32,
  num_hidden_layers: 16,
  num_key_value_heads: 8,
  pretraining_tp: 1,
  rms_norm_eps: 1e-5,
  rope_scaling: {
    factor: 32.0,
    high_freq_factor: 4.0,
    low_freq_factor: 1.0,
    original_max_position_embeddings: 8192,
    rope_type: 'llama3',
  },
  rope_theta: 500000.0,
  tie_word_embeddings: true,
  torch_dtype: 'bfloat16',
  transformers_version: '4.45.0.dev0',
  use_cache: true,
  vocab_size: 128256,
};

test('parses Llama-3.2-1B: llama3 rope scaling, three eos ids; writes back what it read', () => {
  const c = parseModelConfig(LLAMA32_1B);
  assert.deepEqual(c.ropeScaling, {
    type: 'llama3',
    factor: 32,
    lowFreqFactor: 1,
    highFreqFactor: 4,
    originalMaxPositionEmbeddings: 8192,
  });
  assert.deepEqual(c.eosTokenIds, [128001, 128008, 128009]);
  assert.equal(c.ropeTheta, 500000);
  assert.deepEqual(parseModelConfig(writeModelConfig(c)), c);
});

test('transformers 5 layout: rope_parameters carries rope_theta and the scaling', () => {
  const { rope_scaling: scaling, rope_theta: theta, ...rest } = LLAMA32_1B;
  const c = parseModelConfig({ ...rest, dtype: 'bfloat16', rope_parameters: { ...scaling, rope_theta: theta } });
  assert.deepEqual(c, parseModelConfig(LLAMA32_1B));
  const q = parseModelConfig({
    ...QWEN3_06B,
    rope_theta: undefined,
    rope_scaling: undefined,
    rope_parameters: { rope_type: 'default', rope_theta: 1e6 },
  });
  assert.equal(q.ropeTheta, 1e6);
  assert.equal(q.ropeScaling, null);
});

test('llama3 inverse frequencies: short wavelengths kept, long ones divided by the factor, medium ones between', () => {
  const scaling = {
    type: 'llama3',
    factor: 8,
    lowFreqFactor: 1,
    highFreqFactor: 4,
    originalMaxPositionEmbeddings: 64,
  } as const;
  const plain = inverseFrequencies(500000, 16, null);
  const scaled = inverseFrequencies(500000, 16, scaling);
  const wavelen = Array.from(plain, (f) => (2 * Math.PI) / f);
  assert.ok(wavelen[0] < 16 && wavelen[1] > 16 && wavelen[1] < 64 && wavelen[2] > 64);
  assert.equal(scaled[0], plain[0]);
  assert.ok(scaled[1] < plain[1] && scaled[1] > plain[1] / 8);
  for (let i = 2; i < 8; i++) assert.equal(scaled[i], Math.fround(plain[i] / 8));
});
