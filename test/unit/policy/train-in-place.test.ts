import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Policy } from '../../../src/policy/engine/policy.ts';
import { parseModelConfig } from '../../../src/policy/io/config.ts';
import { GROUPS } from '../../../src/policy/model/layout.ts';
import type { TrainBatch } from '../../../src/policy/programs/batch.ts';
import { STARPO_S_PPO } from '../../../src/policy/programs/loss.ts';

const config = parseModelConfig({
  model_type: 'qwen2',
  vocab_size: 40,
  hidden_size: 32,
  intermediate_size: 48,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  tie_word_embeddings: true,
});
const [B, T] = [4, 16];
const n = B * T;
const batch: TrainBatch = {
  batch: B,
  seqLen: T,
  tokens: Int32Array.from({ length: n }, (_, i) => (i * 13) % 40),
  attentionMask: new Float32Array(n).fill(1),
  lossMask: Float32Array.from({ length: n }, (_, i) => (i % T > 2 ? 1 : 0)),
};
const ppo = { ...STARPO_S_PPO, entropyCoef: 0.01 };
const bytes = (a: Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

async function steps(policy: Policy, k: number) {
  const { logprobs } = await policy.score(batch);
  const train = {
    ...batch,
    advantages: Float32Array.from({ length: n }, (_, i) => Math.sin(i)),
    oldLogprobs: logprobs!.map((x) => x + 0.1),
  };
  const metrics = [];
  for (let i = 0; i < k; i++) metrics.push(await policy.trainStep(train, { loss: ppo, lr: 1e-2 }));
  return { metrics, train };
}

test('the in-place optimizer (one gradient buffer, chunked AdamW written over its inputs) takes the one-graph step, whole or in micro-batches', async () => {
  for (const attentionBudget of [1 << 30, 1]) {
    // one call, or one row per call (accumulating in place)
    const reference = new Policy({ config, seed: 3, threads: 1, attentionBudget: 1 << 30, inPlaceOptimizer: false });
    const inPlace = new Policy({ config, seed: 3, threads: 1, attentionBudget, inPlaceOptimizer: true });
    const [a, b] = [await steps(reference, 3), await steps(inPlace, 3)];
    a.metrics.forEach((m, s) => {
      assert.deepEqual(Object.keys(b.metrics[s]), Object.keys(m));
      for (const k of Object.keys(m))
        assert.ok(
          Math.abs(m[k] - b.metrics[s][k]) <= 2e-5 * Math.max(1, Math.abs(m[k])),
          `budget ${attentionBudget} step ${s} ${k}: ${m[k]} vs ${b.metrics[s][k]}`,
        );
    });
    assert.equal(inPlace.step, 3);
    for (const g of GROUPS) {
      const [pa, pb, ma, mb] = [
        reference.getParams()[g],
        inPlace.getParams()[g],
        reference.getMoments()!.m[g],
        inPlace.getMoments()!.m[g],
      ];
      pa.forEach((x, i) =>
        assert.ok(Math.abs(x - pb[i]) < 1e-5 || Math.abs(ma[i]) < 1e-8, `${g} param ${i}: ${x} vs ${pb[i]}`),
      );
      ma.forEach((x, i) => assert.ok(Math.abs(x - mb[i]) < 1e-6, `${g} m ${i}: ${x} vs ${mb[i]}`));
    }
    // the spare-buffer path compiles train (or grad + apply); in place: viewGrad (first, and
    // accumulating), Σg² and AdamW chunks
    assert.ok(
      inPlace.programs.compiles.every((c) => ['score', 'viewGrad', 'sumSquares', 'adamwChunk'].includes(c.kind)),
      inPlace.programs.compiles.map((c) => c.kind).join(),
    );
    assert.equal(inPlace.programs.compiles.filter((c) => c.kind === 'viewGrad').length, attentionBudget === 1 ? 2 : 1);
    await Promise.all([reference.close(), inPlace.close()]);
  }
});

test('in-place steps are bitwise deterministic on 2 threads, and a non-finite gradient leaves params, moments and step untouched', async () => {
  const run = async () => {
    // 2 rows per call
    const policy = new Policy({ config, seed: 5, threads: 2, attentionBudget: 2 * 4 * T * T, inPlaceOptimizer: true });
    const { train } = await steps(policy, 3);
    return { policy, train };
  };
  const [a, b] = [await run(), await run()];
  for (const g of GROUPS) {
    assert.ok(bytes(a.policy.getParams()[g]).equals(bytes(b.policy.getParams()[g])), `params ${g}`);
    assert.ok(bytes(a.policy.getMoments()!.v[g]).equals(bytes(b.policy.getMoments()!.v[g])), `v ${g}`);
  }
  const before = {
    p: a.policy.getParams().matrices.slice(),
    m: a.policy.getMoments()!.m.matrices.slice(),
    v: a.policy.getMoments()!.v.vectors.slice(),
  };
  const bad = { ...a.train, advantages: a.train.advantages!.map((x, i) => (i === 37 ? Number.NaN : x)) };
  const m = await a.policy.trainStep(bad, { loss: ppo, lr: 1e-2 });
  assert.equal(m.skipped, 1);
  assert.ok(!Number.isFinite(m.grad_norm));
  assert.equal(a.policy.step, 3);
  assert.ok(bytes(a.policy.getParams().matrices).equals(bytes(before.p)));
  assert.ok(bytes(a.policy.getMoments()!.m.matrices).equals(bytes(before.m)));
  assert.ok(bytes(a.policy.getMoments()!.v.vectors).equals(bytes(before.v)));
  assert.equal((await a.policy.trainStep(a.train, { loss: ppo, lr: 1e-2 })).skipped, 0);
  assert.equal(a.policy.step, 4);
  await Promise.all([a.policy.close(), b.policy.close()]);
});
