import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Policy } from '../../../src/policy/engine/policy.ts';
import { liveNodes } from '../../../src/policy/graph/onnx.ts';
import { parseModelConfig } from '../../../src/policy/io/config.ts';
import { buildLayout, paramCount } from '../../../src/policy/model/layout.ts';
import type { LoraSpec } from '../../../src/policy/model/lora.ts';
import { DEFAULT_ADAMW } from '../../../src/policy/programs/adamw.ts';
import { STARPO_S_PPO } from '../../../src/policy/programs/loss.ts';
import { buildTrainGraph } from '../../../src/policy/programs/train.ts';
import { tinyModelConfig } from './gradcheck.ts';

const config = tinyModelConfig({ model_type: 'qwen3', vocab_size: 20, head_dim: 6 });
const SPEC: LoraSpec = { rank: 4, alpha: 8, dropout: 0, targets: ['q', 'v', 'down'] };
const [B, T] = [4, 6];
const batch = {
  batch: B,
  seqLen: T,
  tokens: Int32Array.from({ length: B * T }, (_, i) => (i * 7) % 20),
  attentionMask: new Float32Array(B * T).fill(1),
  lossMask: Float32Array.from({ length: B * T }, (_, i) => (i % T > 1 ? 1 : 0)),
};

test('micro-batched LoRA train_step (grad + apply programs) matches the one-graph step, for an actor and a critic', async () => {
  const n = B * T;
  const actor = {
    ...batch,
    advantages: Float32Array.from({ length: n }, (_, i) => Math.sin(i)),
    oldLogprobs: new Float32Array(n).fill(-3),
  };
  const critic = {
    ...batch,
    returns: Float32Array.from({ length: n }, (_, i) => Math.cos(i)),
    oldValues: new Float32Array(n),
  };
  for (const [role, train, loss] of [
    ['actor', actor, STARPO_S_PPO],
    ['critic', critic, { kind: 'value', clip: 0.5, aggregation: 'token-mean' }],
  ] as const) {
    const [whole, micro] = [1 << 30, 1].map(
      (budget) => new Policy({ config, role, seed: 4, threads: 1, lora: SPEC, attentionBudget: budget }),
    );
    for (let step = 0; step < 2; step++) {
      const [a, b] = [
        await whole.trainStep(train, { loss, lr: 1e-2 }),
        await micro.trainStep(train, { loss, lr: 1e-2 }),
      ];
      for (const k of Object.keys(a))
        assert.ok(Math.abs(a[k] - b[k]) <= 1e-5 * Math.max(1, Math.abs(a[k])), `${role} ${k}: ${a[k]} vs ${b[k]}`);
    }
    assert.deepEqual([whole.programs.size, micro.programs.size], [1, 2]);
    whole
      .getParams()
      .matrices.forEach((x, i) => assert.ok(Math.abs(x - micro.getParams().matrices[i]) < 1e-5, `${role} param ${i}`));
    await Promise.all([whole.close(), micro.close()]);
  }
});

test("a LoRA train program computes no gradient of a frozen weight: no live node outputs a frozen weight's shape", () => {
  const frozenShapes = (layout: ReturnType<typeof buildLayout>) =>
    new Set(layout.views.filter((v) => v.shape.length === 2).map((v) => `${v.shape}`));
  const offenders = (lora: LoraSpec | null) => {
    const layout = buildLayout(config, 'actor', lora);
    const shapes = frozenShapes(layout.frozen ?? layout);
    const { graph } = buildTrainGraph(layout, { batch: 3, seqLen: 7, loss: STARPO_S_PPO, optim: DEFAULT_ADAMW });
    return liveNodes(graph)
      .filter((n) => n.outputs.some((v) => shapes.has(`${v.shape}`)))
      .map((n) => n.op);
  };
  assert.ok(
    offenders(null).includes('Gemm'),
    "the full model's program has weight-gradient Gemms (the check can see them)",
  );
  assert.deepEqual(offenders(SPEC), []);
  assert.deepEqual(offenders({ ...SPEC, targets: ['q', 'k', 'v', 'o', 'gate', 'up', 'down'] }), []);
});

test('with LoRA the trained parameters are adapters only (r·(in + out) per projection), a tiny fraction of the frozen base', async () => {
  const wide = parseModelConfig({
    model_type: 'qwen2',
    vocab_size: 256,
    hidden_size: 64,
    intermediate_size: 128,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 2,
  });
  const policy = new Policy({
    config: wide,
    seed: 1,
    threads: 1,
    lora: { rank: 2, alpha: 4, dropout: 0, targets: ['q', 'v', 'down'] },
  });
  const perLayer = 2 * (64 + 64 + (64 + 32) + (128 + 64)); // q: 64 → 64, v: 64 → 2·16, down: 128 → 64
  assert.equal(paramCount(policy.layout), 2 * perLayer);
  assert.equal(paramCount(policy.layout.frozen!), paramCount(buildLayout(wide)));
  assert.ok(
    paramCount(policy.layout) * 50 < paramCount(policy.layout.frozen!),
    `${paramCount(policy.layout)} of ${paramCount(policy.layout.frozen!)}`,
  );
  await policy.trainStep(batch, { loss: { kind: 'sft', aggregation: 'token-mean' }, lr: 1e-2 });
  const { m, v } = policy.getMoments()!;
  assert.deepEqual(
    [m.matrices.length + m.vectors.length, v.matrices.length + v.vectors.length],
    [2 * perLayer, 2 * perLayer],
  );
  const critic = buildLayout(wide, 'critic', policy.layout.lora);
  assert.deepEqual(
    [critic.groups.matrices - 2 * perLayer, critic.groups.vectors, critic.frozen!.byName.has('score.weight')],
    [64, 1, false],
  );
  await policy.close();
});
