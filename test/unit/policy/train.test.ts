import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Policy } from '../../../src/policy/engine/policy.ts';
import { parseModelConfig } from '../../../src/policy/io/config.ts';
import { type TrainBatch, rowCalls } from '../../../src/policy/programs/batch.ts';
import { STARPO_S_PPO } from '../../../src/policy/programs/loss.ts';
import { createCharTokenizer } from '../../../src/policy/tokenizer/char.ts';

const tokenizer = createCharTokenizer({ characters: 'abcdefghijklmnopqrstuvwxyz .' });
const config = parseModelConfig({
  model_type: 'qwen2',
  vocab_size: tokenizer.vocabSize,
  hidden_size: 32,
  intermediate_size: 64,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  tie_word_embeddings: true,
});
const CORPUS = ['the cat sat.', 'a dog ran far.', 'sokoban box.', 'frozen lake.'];

/**
 * Two policies took the same step by different programs: params within 1e-5, except where the gradient
 * is below ~10·eps (|m| = 0.1·|g| < 1e-8 after one step), where AdamW's g / (|g| + eps) turns the float32
 * rounding of a near-zero sum into differences of up to lr. Moments within 1e-5 relative to the largest.
 */
function assertSameUpdate(a: Policy, b: Policy): void {
  const [pa, pb, ma, mb] = [
    a.getParams().matrices,
    b.getParams().matrices,
    a.getMoments()!.m.matrices,
    b.getMoments()!.m.matrices,
  ];
  const mMax = ma.reduce((x, y) => Math.max(x, Math.abs(y)), 0);
  ma.forEach((x, i) => assert.ok(Math.abs(x - mb[i]) <= 1e-5 * mMax, `m ${i}: ${x} vs ${mb[i]}`));
  pa.forEach((x, i) =>
    assert.ok(Math.abs(x - pb[i]) < 1e-5 || Math.abs(ma[i]) < 1e-8, `param ${i}: ${x} vs ${pb[i]} (m ${ma[i]})`),
  );
}

/** The corpus as one right-padded SFT batch: every real token after the first is trained. */
function corpusBatch(): TrainBatch {
  const rows = CORPUS.map((s) => tokenizer.encode(s));
  const T = Math.max(...rows.map((r) => r.length));
  const tokens = new Int32Array(rows.length * T);
  const attentionMask = new Float32Array(rows.length * T);
  const lossMask = new Float32Array(rows.length * T);
  rows.forEach((r, b) =>
    r.forEach(
      (t, i) => ((tokens[b * T + i] = t), (attentionMask[b * T + i] = 1), (lossMask[b * T + i] = i > 0 ? 1 : 0)),
    ),
  );
  return { batch: rows.length, seqLen: T, tokens, attentionMask, lossMask };
}

async function train(steps: number, seed: number): Promise<{ policy: Policy; loss: number }> {
  const policy = new Policy({ config, seed, threads: 2, seqMultiple: 16 });
  let loss = Infinity;
  for (let i = 0; i < steps; i++)
    loss = (await policy.trainStep(corpusBatch(), { loss: { kind: 'sft', aggregation: 'token-mean' }, lr: 1e-2 })).loss;
  return { policy, loss };
}

test('a tiny model memorises a small corpus: cross-entropy falls below 0.1 nats in 150 steps', async () => {
  const { policy, loss } = await train(150, 1);
  assert.ok(loss < 0.1, `final loss ${loss}`);
  assert.equal(policy.step, 150);
  const [g] = await policy.generate({ prompts: [tokenizer.encode('a dog')], maxNewTokens: 9, stopTokenIds: [] });
  assert.equal(tokenizer.decode(g.tokens), ' ran far.');
  await policy.close();
});

test('the same seed gives bitwise-identical weights (2 threads)', async () => {
  const [a, b] = [await train(15, 7), await train(15, 7)];
  for (const g of ['matrices', 'vectors'] as const) {
    assert.ok(Buffer.from(a.policy.getParams()[g].buffer).equals(Buffer.from(b.policy.getParams()[g].buffer)), g);
  }
  assert.ok(
    Buffer.from(a.policy.getMoments()!.v.matrices.buffer).equals(Buffer.from(b.policy.getMoments()!.v.matrices.buffer)),
  );
  await Promise.all([a.policy.close(), b.policy.close()]);
});

test('a PPO step reports its metrics, and a non-finite advantage skips the update', async () => {
  const policy = new Policy({ config, seed: 2, threads: 1, seqMultiple: 16 });
  const batch = corpusBatch();
  const { logprobs } = await policy.score(batch);
  const n = batch.batch * batch.seqLen;
  const ppo = { ...batch, advantages: new Float32Array(n).fill(1), oldLogprobs: logprobs!.map((x) => x + 0.5) };
  const m = await policy.trainStep(ppo, { loss: STARPO_S_PPO, lr: 1e-3 });
  assert.deepEqual(Object.keys(m), [
    'loss',
    'pg_loss',
    'entropy',
    'kl_ref',
    'clip_frac',
    'approx_kl',
    'grad_norm',
    'skipped',
    'tokens',
  ]);
  assert.equal(m.clip_frac, 0); // ratio e^-0.5 ≈ 0.61 with A > 0: below the range, unclipped side wins
  assert.ok(Math.abs(m.approx_kl - 0.5) < 1e-5 && m.skipped === 0 && m.tokens === 46 && policy.step === 1);
  const before = policy.getParams().matrices.slice();
  const moments = policy.getMoments()!.v.matrices.slice();
  ppo.advantages[5] = Number.NaN;
  const bad = await policy.trainStep(ppo, { loss: STARPO_S_PPO, lr: 1e-3 });
  assert.equal(bad.skipped, 1);
  assert.equal(policy.step, 1);
  assert.ok(Buffer.from(policy.getParams().matrices.buffer).equals(Buffer.from(before.buffer)));
  assert.ok(Buffer.from(policy.getMoments()!.v.matrices.buffer).equals(Buffer.from(moments.buffer)));
  assert.equal(
    (await policy.trainStep({ ...ppo, advantages: new Float32Array(n).fill(1) }, { loss: STARPO_S_PPO, lr: 1e-3 }))
      .skipped,
    0,
  );
  assert.equal(policy.step, 2); // the next finite step applies
  await policy.close();
});

test('micro-batched train_step (gradient accumulation) matches the one-graph step, and chunked scoring matches', async () => {
  const ppo = { ...STARPO_S_PPO, aggregation: 'seq-mean-token-mean', entropyCoef: 0.01 } as const;
  const whole = new Policy({ config, seed: 4, threads: 1, seqMultiple: 16 });
  const micro = new Policy({ config, seed: 4, threads: 1, seqMultiple: 16, attentionBudget: 1 }); // one row per call
  const batch = corpusBatch();
  const n = batch.batch * batch.seqLen;
  batch.lossMask.fill(0, 2 * batch.seqLen, 3 * batch.seqLen); // a row with nothing to train
  const { logprobs } = await whole.score(batch);
  assert.deepEqual(await micro.score(batch), await whole.score(batch));
  const train = {
    ...batch,
    advantages: Float32Array.from({ length: n }, (_, i) => Math.sin(i)),
    oldLogprobs: logprobs!.map((x) => x + 0.1),
  };
  for (let step = 0; step < 2; step++) {
    const [a, b] = [
      await whole.trainStep(train, { loss: ppo, lr: 1e-2 }),
      await micro.trainStep(train, { loss: ppo, lr: 1e-2 }),
    ];
    assert.deepEqual(Object.keys(b), Object.keys(a));
    for (const k of Object.keys(a))
      assert.ok(Math.abs(a[k] - b[k]) <= 1e-5 * Math.max(1, Math.abs(a[k])), `${k}: ${a[k]} vs ${b[k]}`);
  }
  assertSameUpdate(whole, micro);
  await Promise.all([whole.close(), micro.close()]);
});

test('a large vocabulary splits train_step into micro-batches by its logits, with the same result', async () => {
  // vocab 512, T = 16: logits 8192 floats per row, attention 4·16² = 1024. A budget of 16384 allows
  // 4 rows by attention but 2 by logits, so the budgeted policy runs grad + apply programs.
  const big = parseModelConfig({
    model_type: 'qwen2',
    vocab_size: 512,
    hidden_size: 32,
    intermediate_size: 64,
    num_hidden_layers: 1,
    num_attention_heads: 4,
    num_key_value_heads: 4,
    tie_word_embeddings: true,
  });
  const [B, T] = [4, 16];
  const batch: TrainBatch = {
    batch: B,
    seqLen: T,
    tokens: Int32Array.from({ length: B * T }, (_, i) => (i * 37) % 512),
    attentionMask: new Float32Array(B * T).fill(1),
    lossMask: new Float32Array(B * T).fill(1),
  };
  const whole = new Policy({ config: big, seed: 6, threads: 1, seqMultiple: 16 });
  const split = new Policy({ config: big, seed: 6, threads: 1, seqMultiple: 16, attentionBudget: 16384 });
  const sft = { loss: { kind: 'sft', aggregation: 'token-mean' }, lr: 1e-2 } as const;
  const [a, b] = [await whole.trainStep(batch, sft), await split.trainStep(batch, sft)];
  assert.equal(whole.programs.size, 1); // one train program
  assert.equal(split.programs.size, 2); // grad (2 rows per call) + apply
  assert.ok(
    Math.abs(a.loss - b.loss) < 1e-5 && Math.abs(a.grad_norm - b.grad_norm) < 1e-5,
    `${a.loss}/${b.loss} ${a.grad_norm}/${b.grad_norm}`,
  );
  assertSameUpdate(whole, split);
  await Promise.all([whole.close(), split.close()]);
});

test('rows that do not fill the last call run it at their own size, not padded: 3 rows at 2 per call are 2 + 1', async () => {
  const [B, T] = [3, 16];
  const batch: TrainBatch = {
    batch: B,
    seqLen: T,
    tokens: Int32Array.from({ length: B * T }, (_, i) => (i * 29) % config.vocabSize),
    attentionMask: new Float32Array(B * T).fill(1),
    lossMask: new Float32Array(B * T).fill(1),
  };
  const perRow = Math.max(config.numHeads * T * T, T * config.vocabSize);
  const whole = new Policy({ config, seed: 6, threads: 1, seqMultiple: 16 });
  const split = new Policy({ config, seed: 6, threads: 1, seqMultiple: 16, attentionBudget: 2 * perRow });
  const [x, y] = [(await whole.score(batch)).logprobs!, (await split.score(batch)).logprobs!];
  x.forEach((v, i) =>
    assert.ok(Math.abs(v - y[i]) <= 1e-5 * Math.max(1, Math.abs(v)), `logprob ${i}: ${v} vs ${y[i]}`),
  );
  const scoreShapes = split.programs.compiles.filter((c) => c.kind === 'score').length;
  assert.equal(scoreShapes, 2, 'a 2-row and a 1-row score program');
  const sft = { loss: { kind: 'sft', aggregation: 'token-mean' }, lr: 1e-2 } as const;
  const [a, b] = [await whole.trainStep(batch, sft), await split.trainStep(batch, sft)];
  assert.equal(split.programs.compiles.filter((c) => c.kind === 'grad').length, 2, 'a 2-row and a 1-row grad program');
  assert.ok(Math.abs(a.loss - b.loss) < 1e-5 && Math.abs(a.grad_norm - b.grad_norm) < 1e-5);
  assertSameUpdate(whole, split);
  assert.deepEqual(rowCalls(5, 2), [
    [0, 2],
    [2, 2],
    [4, 1],
  ]);
  assert.deepEqual(rowCalls(4, 4), [[0, 4]]);
  await Promise.all([whole.close(), split.close()]);
});
