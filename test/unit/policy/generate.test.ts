import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { Policy } from '../../../src/policy/engine/policy.ts';
import { batchBucket } from '../../../src/policy/engine/generate.ts';
import { ProgramCache } from '../../../src/policy/engine/programs.ts';
import { greedyNext } from '../../../src/policy/engine/recompute.ts';
import { parseModelConfig } from '../../../src/policy/io/config.ts';
import { createCharTokenizer } from '../../../src/policy/tokenizer/char.ts';

const config = parseModelConfig({
  model_type: 'qwen2',
  vocab_size: 30,
  hidden_size: 32,
  intermediate_size: 48,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  initializer_range: 0.35,
});
const policy = new Policy({ config, seed: 3, threads: 1 });
after(() => policy.close());
const PROMPTS = [[1, 2, 3], [4, 5, 6, 7, 8, 9, 10, 11, 12], [13]];

test('greedy generation with the KV cache returns the tokens and log-probs of full recomputation (prefill of every prefix)', async () => {
  const gens = await policy.generate({ prompts: PROMPTS, maxNewTokens: 10, stopTokenIds: [] });
  for (let s = 0; s < 10; s++) {
    const ref = await greedyNext(
      policy,
      PROMPTS.map((p, b) => [...p, ...gens[b].tokens.slice(0, s)]),
    );
    assert.deepEqual(
      gens.map((g) => g.tokens[s]),
      ref.tokens,
      `step ${s}`,
    );
    gens.forEach((g, b) => assert.ok(Math.abs(g.logprobs[s] - ref.logprobs[b]) < 1e-5, `step ${s} row ${b}`));
  }
});

test('score agrees with the log-probs and entropies generate reports (greedy, and sampled at 0.7 and 1)', async () => {
  // Temperature 1 draws from the program's weights (drawFromWeights), 0.7 with top-k in TypeScript (TokenSampler).
  for (const sampling of [{ temperature: 0 }, { temperature: 0.7, topK: 10 }, { temperature: 1 }]) {
    const gens = await policy.generate({ prompts: PROMPTS, maxNewTokens: 6, sampling, seed: 11, stopTokenIds: [] });
    const T = Math.max(...PROMPTS.map((p, b) => p.length + gens[b].tokens.length));
    const tokens = new Int32Array(PROMPTS.length * T);
    const mask = new Float32Array(PROMPTS.length * T);
    PROMPTS.forEach((p, b) =>
      [...p, ...gens[b].tokens].forEach((t, i) => ((tokens[b * T + i] = t), (mask[b * T + i] = 1))),
    );
    const { logprobs, entropy } = await policy.score(
      { batch: PROMPTS.length, seqLen: T, tokens, attentionMask: mask },
      sampling.temperature || 1,
    );
    const at = (b: number, i: number) => b * T + PROMPTS[b].length + i;
    gens.forEach((g, b) => g.logprobs.forEach((lp, i) => assert.ok(Math.abs(lp - logprobs![at(b, i)]) < 1e-4)));
    gens.forEach((g, b) =>
      g.entropies.forEach((h, i) => assert.ok(Math.abs(h - entropy![at(b, i)]) < 1e-4, `${h} ${entropy![at(b, i)]}`)),
    );
  }
});

test('sampling is reproducible per seed and rows stop at a stop token', async () => {
  const req = { prompts: PROMPTS, maxNewTokens: 12, sampling: { temperature: 1 }, seed: 4, stopTokenIds: [] };
  const [a, b] = [await policy.generate(req), await policy.generate(req)];
  assert.deepEqual(a, b);
  const stopAt = a[1].tokens[4];
  const stopped = await policy.generate({ ...req, stopTokenIds: [stopAt] });
  const first = a[1].tokens.indexOf(stopAt);
  const cut = (xs: number[]) => xs.slice(0, first + 1);
  const expected = {
    tokens: cut(a[1].tokens),
    logprobs: cut(a[1].logprobs),
    entropies: cut(a[1].entropies),
    finishReason: 'stop',
  };
  assert.deepEqual(stopped[1], { ...expected, stopString: undefined });
});

test('a stop string ends a row once the decoded continuation contains it', async () => {
  const tokenizer = createCharTokenizer({ characters: 'abcdefghijklmnopqrstuvwxyz0' }); // 30 ids with pad, eos, unk
  const p = new Policy({ config, seed: 3, threads: 1, tokenizer });
  p.setParams(policy.getParams());
  const free = await p.generate({ prompts: PROMPTS, maxNewTokens: 12, stopTokenIds: [] });
  const text = tokenizer.decode(free[0].tokens);
  const stop = text.slice(3, 5);
  const [g] = await p.generate({ prompts: [PROMPTS[0]], maxNewTokens: 12, stopTokenIds: [], stopStrings: [stop] });
  assert.equal(g.finishReason, 'stop');
  assert.equal(g.stopString, stop);
  assert.ok(
    tokenizer.decode(g.tokens).endsWith(stop) &&
      tokenizer.decode(g.tokens).indexOf(stop) === tokenizer.decode(g.tokens).length - stop.length,
  );
  await p.close();
});

test('generation pads the batch to a bucket and the program cache stays bounded', async () => {
  assert.deepEqual([1, 3, 5, 9, 60, 65, 100].map(batchBucket), [2, 4, 8, 16, 64, 96, 128]);
  const cache = new ProgramCache(policy.layout, { threads: 1 }, 2);
  for (const seqLen of [4, 8, 12]) await cache.score({ batch: 1, seqLen });
  assert.equal(cache.size, 2);
  await cache.release();
  const gens = await policy.generate({ prompts: PROMPTS, maxNewTokens: 3, stopTokenIds: [] }); // compiled for 4 rows
  assert.equal(gens.length, 3);
});

test('prefill in row chunks (small attention budget) generates what one prefill does, bit for bit', async () => {
  // two rows per prefill call
  const chunked = new Policy({ config, seed: 3, threads: 1, attentionBudget: 4 * 16 * 32 });
  chunked.setParams(policy.getParams());
  for (const sampling of [{ temperature: 0 }, { temperature: 1 }]) {
    const req = { prompts: PROMPTS, maxNewTokens: 6, sampling, seed: 9, stopTokenIds: [] };
    assert.deepEqual(await chunked.generate(req), await policy.generate(req));
  }
  await chunked.close();
});

test('rows that stop leave the batch: the others run smaller programs and sample exactly what they would alone', async () => {
  const prompts = Array.from({ length: 16 }, (_, r) => Array.from({ length: 1 + (r % 5) }, (_, i) => (r * 7 + i) % 28));
  const rowSeeds = prompts.map((_, r) => 100 + r);
  for (const sampling of [{ temperature: 0 }, { temperature: 1 }, { temperature: 0.8, topP: 0.9 }]) {
    const req = { prompts, rowSeeds, maxNewTokens: 16, sampling, stopTokenIds: [] as number[] };
    const free = await policy.generate(req);
    // every token the last row never writes stops a row: the last row writes all 16, the others stop early
    const stops = [...Array(config.vocabSize).keys()].filter((t) => !free[15].tokens.includes(t));
    const stopped = { ...req, stopTokenIds: stops };
    const before = policy.generationStats.decoded;
    const batch = await policy.generate(stopped);
    const decoded = policy.generationStats.decoded - before;
    const longest = Math.max(...batch.map((g) => g.tokens.length));
    assert.ok(
      batch.some((g) => g.tokens.length < 6) && longest === 16,
      JSON.stringify(batch.map((g) => g.tokens.length)),
    );
    assert.ok(decoded < 16 * (longest - 1), `${decoded} rows decoded in ${longest - 1} steps: no row left the batch`);
    for (const [r, g] of batch.entries()) {
      // the same tokens; the numbers to float rounding (MLAS sums a batch of 2 and one of 16 in other orders)
      const [alone] = await policy.generate({ ...stopped, prompts: [prompts[r]], rowSeeds: [rowSeeds[r]] });
      const at = `row ${r} at ${JSON.stringify(sampling)}`;
      assert.deepEqual([g.tokens, g.finishReason], [alone.tokens, alone.finishReason], at);
      g.logprobs.forEach((lp, i) => assert.ok(Math.abs(lp - alone.logprobs[i]) < 1e-5, at));
      g.entropies.forEach((h, i) => assert.ok(Math.abs(h - alone.entropies[i]) < 1e-5, at));
    }
  }
});
