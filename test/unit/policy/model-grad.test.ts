import assert from 'node:assert/strict';
import { test } from 'node:test';
import { tensor, type OrtTensor } from '../../../src/policy/engine/session.ts';
import { type ModelConfig, parseModelConfig } from '../../../src/policy/io/config.ts';
import { buildLayout } from '../../../src/policy/model/layout.ts';
import { initParams } from '../../../src/policy/model/params.ts';
import { DEFAULT_ADAMW } from '../../../src/policy/programs/adamw.ts';
import { positionsOf } from '../../../src/policy/programs/batch.ts';
import type { LossSpec } from '../../../src/policy/programs/loss.ts';
import { buildLoss } from '../../../src/policy/programs/train.ts';
import { gradCheck, rand, TINY_MODELS } from './gradcheck.ts';

const B = 2;
const T = 6;
const config = TINY_MODELS.qwen2;

/** Row 0 is left-padded by two tokens; row 1 trains only its last three predictions. */
function feeds(names: readonly string[]): Record<string, OrtTensor> {
  const mask = Float64Array.from([0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]);
  const f64 = (d: Float64Array): OrtTensor => tensor('float64', [B, T], d);
  const ids = (xs: number[]): OrtTensor => tensor('int64', [B, T], BigInt64Array.from(xs.map(BigInt)));
  const all: Record<string, OrtTensor> = {
    tokens: ids([0, 0, 3, 7, 1, 9, 4, 4, 2, 10, 5, 6]),
    targets: ids([0, 3, 7, 1, 9, 0, 4, 2, 10, 5, 6, 0]),
    positions: tensor('int64', [B, T], positionsOf(mask, B, T)),
    attention_mask: f64(mask),
    loss_mask: f64(Float64Array.from([0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0])),
    advantages: f64(rand(B * T, 3, -1, 1)),
    old_logprobs: f64(rand(B * T, 4, -2.8, -2.0)),
    ref_logprobs: f64(rand(B * T, 5, -2.8, -2.0)),
    returns: f64(rand(B * T, 6, -1, 1)),
    old_values: f64(rand(B * T, 7, -0.3, 0.3)),
    inv_temperature: tensor('float64', [], Float64Array.of(1 / 0.7)),
    token_count: tensor('float64', [], Float64Array.of(6)), // the loss mask's trained tokens
    sequence_count: tensor('float64', [], Float64Array.of(2)),
  };
  return Object.fromEntries(
    ['tokens', 'targets', 'positions', 'attention_mask', 'loss_mask', 'token_count', 'sequence_count', ...names].map(
      (n) => [n, all[n]],
    ),
  );
}

async function checkModel(role: 'actor' | 'critic', loss: LossSpec, cfg: ModelConfig = config): Promise<number> {
  const layout = buildLayout(cfg, role);
  const init = initParams(layout, 17);
  const inputs = layout.views.map((v) => ({
    name: `w.${v.key}`,
    shape: v.shape,
    data: Float64Array.from(
      init[v.group].subarray(v.offset, v.offset + v.size),
      (x, i) => x + 0.05 * Math.sin(i + v.offset),
    ),
  }));
  const spec = { batch: B, seqLen: T, loss, optim: DEFAULT_ADAMW };
  const lm = ['inv_temperature'];
  const names =
    loss.kind === 'ppo'
      ? [...lm, 'advantages', 'old_logprobs', 'ref_logprobs']
      : loss.kind === 'value'
        ? ['returns', 'old_values']
        : lm;
  const r = await gradCheck(
    inputs,
    (ws, g) => buildLoss(g, { cfg, w: Object.fromEntries(layout.views.map((v, i) => [v.key, ws[i]])) }, spec).loss,
    {
      samples: 8,
      extra: feeds(names),
    },
  );
  return r.maxRelError;
}

test('2-layer actor with the PPO loss (clips, dual clip, k3 KL, entropy, masks) matches finite differences', async () => {
  const loss: LossSpec = {
    kind: 'ppo',
    clipLow: 0.2,
    clipHigh: 0.28,
    dualClip: 1.1,
    entropyCoef: 0.05,
    kl: { coef: 0.3, estimator: 'k3' },
    aggregation: 'seq-mean-token-mean',
  };
  const err = await checkModel('actor', loss);
  assert.ok(err < 1e-5, `max relative error ${err}`);
});

test('2-layer actor with token-mean PPO and k1 KL matches finite differences', async () => {
  const loss: LossSpec = {
    kind: 'ppo',
    clipLow: 0.1,
    clipHigh: 0.1,
    dualClip: null,
    entropyCoef: 0,
    kl: { coef: 0.5, estimator: 'k1' },
    aggregation: 'token-mean',
  };
  const err = await checkModel('actor', loss);
  assert.ok(err < 1e-5, `max relative error ${err}`);
});

test('2-layer critic with the clipped value loss matches finite differences', async () => {
  const err = await checkModel('critic', { kind: 'value', clip: 0.2, aggregation: 'token-mean' });
  assert.ok(err < 1e-5, `max relative error ${err}`);
});

test('2-layer actor with masked cross-entropy (SFT) matches finite differences', async () => {
  const err = await checkModel('actor', { kind: 'sft', aggregation: 'seq-mean-token-sum' });
  assert.ok(err < 1e-5, `max relative error ${err}`);
});

test('Qwen3 (q/k norms, head_dim 6) and Llama 3 rope scaling: SFT gradients match finite differences', async () => {
  const qwen3 = TINY_MODELS.qwen3;
  const llama3 = parseModelConfig({
    model_type: 'llama',
    vocab_size: 11,
    hidden_size: 16,
    intermediate_size: 24,
    num_hidden_layers: 1,
    num_attention_heads: 2,
    num_key_value_heads: 1,
    initializer_range: 0.3,
    rope_theta: 500000,
    rope_scaling: {
      rope_type: 'llama3',
      factor: 8,
      low_freq_factor: 1,
      high_freq_factor: 4,
      original_max_position_embeddings: 64,
    },
  });
  for (const cfg of [qwen3, llama3]) {
    const err = await checkModel('actor', { kind: 'sft', aggregation: 'token-mean' }, cfg);
    assert.ok(err < 1e-5, `${cfg.modelType}: max relative error ${err}`);
  }
});
