import assert from 'node:assert/strict';
import { test } from 'node:test';
import { tensor, type OrtTensor } from '../../../src/policy/engine/session.ts';
import type { ModelConfig } from '../../../src/policy/io/config.ts';
import { type Layout, type Role, buildLayout } from '../../../src/policy/model/layout.ts';
import { type LoraTarget, loraScale } from '../../../src/policy/model/lora.ts';
import { type Packed, initParams } from '../../../src/policy/model/params.ts';
import { DEFAULT_ADAMW } from '../../../src/policy/programs/adamw.ts';
import { positionsOf } from '../../../src/policy/programs/batch.ts';
import { type LossSpec, lossDef } from '../../../src/policy/programs/loss.ts';
import { buildLoss } from '../../../src/policy/programs/train.ts';
import { type CheckInput, gradCheck, rand, TINY_MODELS } from './gradcheck.ts';

const [B, T] = [2, 5];
const QWEN2 = TINY_MODELS.qwen2;
const QWEN3 = TINY_MODELS.qwen3;

/** Row 0 left-padded by one token; both rows train their last three predictions. */
function feeds(): Record<string, OrtTensor> {
  const mask = Float64Array.from([0, 1, 1, 1, 1, 1, 1, 1, 1, 1]);
  const f64 = (d: Float64Array, shape = [B, T]): OrtTensor => tensor('float64', shape, d);
  const ids = (xs: number[]): OrtTensor => tensor('int64', [B, T], BigInt64Array.from(xs.map(BigInt)));
  return {
    tokens: ids([0, 3, 7, 1, 9, 4, 2, 10, 5, 6]),
    targets: ids([3, 7, 1, 9, 0, 2, 10, 5, 6, 0]),
    positions: tensor('int64', [B, T], positionsOf(mask, B, T)),
    attention_mask: f64(mask),
    loss_mask: f64(Float64Array.from([0, 1, 1, 1, 0, 0, 1, 1, 1, 0])),
    advantages: f64(rand(B * T, 3, -1, 1)),
    old_logprobs: f64(rand(B * T, 4, -2.8, -2.0)),
    returns: f64(rand(B * T, 6, -1, 1)),
    old_values: f64(rand(B * T, 7, -0.3, 0.3)),
    inv_temperature: f64(Float64Array.of(1 / 0.7), []),
    token_count: f64(Float64Array.of(6), []),
    sequence_count: f64(Float64Array.of(2), []),
  };
}

/** The views of one layout as float64 check inputs; only the adapters' are differentiated. */
function viewInputs(layout: Layout, p: Packed, differentiate: boolean): CheckInput[] {
  return layout.views.map((v) => ({
    name: `w.${v.key}`,
    shape: v.shape,
    data: Float64Array.from(p[v.group].subarray(v.offset, v.offset + v.size)),
    differentiate,
  }));
}

async function checkLora(cfg: ModelConfig, role: Role, loss: LossSpec, targets: LoraTarget[]): Promise<number> {
  const spec = { rank: 2, alpha: 3, dropout: 0, targets } as const;
  const layout = buildLayout(cfg, role, spec);
  const adapters = initParams(layout, 18);
  adapters.matrices.set(rand(layout.groups.matrices, 9, -0.4, 0.4)); // B ≠ 0, so the A gradients are not all zero
  const inputs = [
    ...viewInputs(layout.frozen!, initParams(layout.frozen!, 17), false),
    ...viewInputs(layout, adapters, true),
  ];
  const shape = { batch: B, seqLen: T, loss, optim: DEFAULT_ADAMW };
  const model = (ws: readonly unknown[]) => ({
    cfg,
    w: Object.fromEntries(inputs.map((x, i) => [x.name.slice(2), ws[i]])),
    lora: { scale: loraScale(spec) },
  });
  const used = [
    'tokens',
    'targets',
    'positions',
    'attention_mask',
    'loss_mask',
    'token_count',
    'sequence_count',
    ...lossDef(loss).inputs(loss),
  ];
  const extra = Object.fromEntries(
    Object.entries(feeds()).filter(([n]) => used.includes(n) || (n === 'inv_temperature' && role === 'actor')),
  );
  const r = await gradCheck(inputs, (ws, g) => buildLoss(g, model(ws) as never, shape).loss, { samples: 6, extra });
  assert.ok(r.checked > 6 * 4, `checked ${r.checked}`);
  return r.maxRelError;
}

test('Qwen2 LoRA on all seven projections (q|k|v fused, with bias): PPO adapter gradients match finite differences', async () => {
  const loss: LossSpec = {
    kind: 'ppo',
    clipLow: 0.2,
    clipHigh: 0.28,
    dualClip: 1.1,
    entropyCoef: 0.05,
    kl: null,
    aggregation: 'seq-mean-token-mean',
  };
  const err = await checkLora(QWEN2, 'actor', loss, ['q', 'k', 'v', 'o', 'gate', 'up', 'down']);
  assert.ok(err < 1e-5, `max relative error ${err}`);
});

test('Qwen3 LoRA (q/k norms) on q, k, v and down: SFT adapter gradients match finite differences', async () => {
  const err = await checkLora(QWEN3, 'actor', { kind: 'sft', aggregation: 'token-mean' }, ['down', 'v', 'q', 'k']);
  assert.ok(err < 1e-5, `max relative error ${err}`);
});

test('LoRA on k alone inside the fused q|k|v block, and on up: SFT adapter gradients match finite differences', async () => {
  const err = await checkLora(QWEN2, 'actor', { kind: 'sft', aggregation: 'seq-mean-token-sum' }, ['k', 'up']);
  assert.ok(err < 1e-5, `max relative error ${err}`);
});

test('a LoRA critic: adapter and value-head gradients match finite differences under the clipped value loss', async () => {
  const err = await checkLora(QWEN3, 'critic', { kind: 'value', clip: 0.2, aggregation: 'token-mean' }, [
    'q',
    'v',
    'down',
  ]);
  assert.ok(err < 1e-5, `max relative error ${err}`);
});
