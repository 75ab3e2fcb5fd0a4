/**
 * The LM head on the positions a call reads (programs/head-rows.ts): which rows a program takes, that its head
 * Gemm runs on those rows only, and a policy whose scores and train steps equal the whole head's, packed or not.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { Policy } from '../../../src/policy/engine/policy.ts';
import { liveNodes } from '../../../src/policy/graph/onnx.ts';
import { buildLayout } from '../../../src/policy/model/layout.ts';
import { DEFAULT_ADAMW } from '../../../src/policy/programs/adamw.ts';
import { headRows, headRowsFor } from '../../../src/policy/programs/head-rows.ts';
import { STARPO_S_PPO } from '../../../src/policy/programs/loss.ts';
import { buildScoreGraph } from '../../../src/policy/programs/score.ts';
import { buildViewGradGraph } from '../../../src/policy/programs/train.ts';
import { assertWithin, batch } from './shared-prompt-batch.ts';
import { tinyConfig } from './tiny-config.ts';

test('a program takes the count rounded up to a quarter octave, at least 32', () => {
  const cases = [0, 1, 32, 33, 41, 64, 65, 97, 128, 129, 200, 1000];
  assert.deepEqual(cases.map(headRowsFor), [32, 32, 32, 40, 48, 64, 80, 112, 128, 160, 224, 1024]);
});

test('head rows: each marked token is predicted by the row before it, in the bucket alignment; the rest point past', () => {
  const [S, T] = [40, 64]; // the batch's length, its bucket's
  const mask = new Float32Array(3 * S);
  mask.fill(1, 5, 40); // row 0: tokens 5 … 39, predicted by rows 4 … 38
  mask.fill(1, 2 * S + 1, 2 * S + 3); // row 2: tokens 1, 2
  const heads = headRows(mask, { batch: 3, seqLen: S }, { batch: 4, seqLen: T })!;
  const picked = [...Array.from({ length: 35 }, (_, i) => 4 + i), 2 * T, 2 * T + 1];
  assert.equal(heads.rows.length, 40);
  assert.deepEqual(Array.from(heads.rows.slice(0, 37), Number), picked);
  assert.deepEqual(Array.from(heads.rows.slice(37), Number), [0, 0, 0], 'the rows past the count repeat row 0');
  assert.equal(heads.inverse.length, 4 * T);
  heads.inverse.forEach((j, p) =>
    assert.equal(Number(j), picked.includes(p) ? picked.indexOf(p) : 40, `position ${p}`),
  );
  // More than half the positions: the whole head runs.
  assert.equal(headRows(new Float32Array(2 * S).fill(1), { batch: 2, seqLen: S }, { batch: 2, seqLen: S }), null);
});

test('a program with head rows runs the LM head Gemm on them alone, forward and backward', () => {
  const config = tinyConfig('qwen2', 0.05);
  const V = config.vocabSize;
  const layout = buildLayout(config, 'actor');
  const headGemmRows = (nodes: ReturnType<typeof liveNodes>) =>
    nodes.filter((n) => n.op === 'Gemm' && n.outputs[0]!.shape[1] === V).map((n) => n.outputs[0]!.shape[0]);
  const shape = { batch: 2, seqLen: 64 };
  assert.deepEqual(headGemmRows(liveNodes(buildScoreGraph(layout, shape))), [128]);
  assert.deepEqual(headGemmRows(liveNodes(buildScoreGraph(layout, { ...shape, heads: 40 }))), [40]);
  const spec = { ...shape, heads: 40, loss: STARPO_S_PPO, optim: DEFAULT_ADAMW };
  const rows = headGemmRows(liveNodes(buildViewGradGraph(layout, spec, false).graph));
  assert.ok(rows.length > 0 && rows.every((r) => r === 40), `logit Gemms over ${rows}`);
});

const policies: Policy[] = [];
const make = (headRows: boolean, packPrefixes = false, lora = false) => {
  const p = new Policy({
    config: tinyConfig('qwen2', 0.05),
    seed: 5,
    threads: 1,
    headRows,
    packPrefixes,
    ...(lora ? { lora: { rank: 2, alpha: 4, dropout: 0, targets: ['q', 'v', 'up'] } } : {}),
  });
  policies.push(p);
  return p;
};
after(() => Promise.all(policies.map((p) => p.close())));

test("scores with a head mask are the whole head's where it marks and 0 elsewhere, rows apart and packed", async () => {
  const whole = await make(false).score(batch);
  const scored = { ...batch, headMask: batch.lossMask };
  for (const packPrefixes of [false, true]) {
    const policy = make(true, packPrefixes);
    const picked = await policy.score(scored);
    for (const n of ['logprobs', 'entropy'] as const) {
      const expected = whole[n]!.map((x, i) => (batch.lossMask[i] > 0 ? x : 0));
      if (packPrefixes) assertWithin(picked[n]!, expected, 1e-5, `packed ${n}`);
      else assert.deepEqual(picked[n], expected, n);
    }
    const unmasked = (await policy.score(batch)).logprobs!;
    assert.ok(
      unmasked.some((x, i) => x !== 0 && !batch.lossMask[i]),
      'without a head mask every position is scored',
    );
  }
  // A score call with no loss mask (the collapse probe's): the head mask alone bounds the packed prefix.
  const { tokens, attentionMask } = batch;
  const probe = { batch: batch.batch, seqLen: batch.seqLen, tokens, attentionMask, headMask: batch.lossMask };
  const packed = await make(true, true).score(probe);
  assertWithin(
    packed.logprobs!,
    whole.logprobs!.map((x, i) => (batch.lossMask[i] > 0 ? x : 0)),
    1e-5,
    'probe',
  );
  const critic = new Policy({ config: tinyConfig('qwen2', 0.05), role: 'critic', seed: 5, threads: 1, headRows: true });
  policies.push(critic);
  assert.deepEqual((await critic.score(scored)).values, (await critic.score(batch)).values, 'a critic ignores it');
});

test("a train step with the head on the trained tokens takes the whole head's step (full, LoRA, packed)", async () => {
  // With eps ≫ |g| and no clipping or decay, Adam's first step moves each weight by ≈ −g (prefix-pack.test.ts).
  const optim = { ...DEFAULT_ADAMW, eps: 1, weightDecay: 0, maxGradNorm: null };
  for (const [lora, packPrefixes] of [
    [false, false],
    [true, false],
    [false, true],
  ]) {
    const [whole, picked] = [make(false, packPrefixes, lora), make(true, packPrefixes, lora)];
    const before = whole.getParams().matrices.slice();
    const opts = { loss: STARPO_S_PPO, lr: 1, optim };
    const [mw, mp] = [await whole.trainStep(batch, opts), await picked.trainStep(batch, opts)];
    const what = `${lora ? 'LoRA' : 'full'}${packPrefixes ? ', packed' : ''}`;
    assertWithin([mp.loss, mp.grad_norm, mp.tokens], [mw.loss, mw.grad_norm, mw.tokens], 1e-5, `${what} metrics`);
    const [dw, dp] = [whole, picked].map((p) => p.getParams().matrices.map((x, i) => x - before[i]));
    const scale = Math.max(...dw.map(Math.abs));
    assert.ok(scale > 1e-6, `${what}: the step moved nothing`);
    const worst = Math.max(...dp.map((x, i) => Math.abs(x - dw[i])));
    assert.ok(worst <= 1e-4 * scale, `${what}: gradients differ by ${worst} (largest ${scale})`);
  }
});
