import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { Policy } from '../../../src/policy/engine/policy.ts';
import { tinyConfig } from './tiny-config.ts';

const config = tinyConfig('qwen3', 0.35);
const plain = new Policy({ config, seed: 3, threads: 1 });
const cached = new Policy({ config, seed: 3, threads: 1, kvCacheBytes: 1 << 24 });
after(() => Promise.all([plain.close(), cached.close()]));

const SYSTEM = Array.from({ length: 40 }, (_, i) => (i * 7 + 3) % 300);
/** Seven rows: two groups of three identical prompts and one alone, all under one system prompt. */
const FIRST = [0, 0, 0, 1, 1, 1, 2].map((g) => [
  ...SYSTEM,
  ...Array.from({ length: 20 + 3 * g }, (_, i) => (i * 13 + 31 * g) % 300),
]);
const request = (prompts: number[][], turn: number) => ({
  prompts,
  maxNewTokens: 10,
  sampling: { temperature: 1 },
  rowSeeds: prompts.map((_, i) => 7 * i + turn),
  stopTokenIds: [5, 9],
});
/** The next turn's prompts: each row's prompt, its answer and an observation of its own length. */
const nextTurn = (prompts: number[][], answers: { tokens: number[] }[], turn: number) =>
  prompts.map((p, i) => [
    ...p,
    ...answers[i].tokens,
    ...Array.from({ length: 5 + ((i + turn) % 7) }, (_, k) => (17 * k + turn) % 300),
  ]);

test('a cache kept across turns and shared prefixes sample the tokens and log-probs of full re-prefills, bit for bit', async () => {
  let prompts = FIRST;
  for (let turn = 0; turn < 4; turn++) {
    const [full, reused] = [
      await plain.generate(request(prompts, turn)),
      await cached.generate(request(prompts, turn)),
    ];
    assert.deepEqual(reused, full, `turn ${turn}`);
    prompts = nextTurn(prompts, full, turn);
  }
  const s = cached.generationStats;
  // without a store a call computes each distinct prompt once; its identical rows take its keys
  assert.equal(s.prompt, plain.generationStats.prefilled + plain.generationStats.reused);
  assert.ok(plain.generationStats.reused > 0);
  assert.ok(
    s.prefilled + s.shared < s.prompt / 4,
    `computed ${s.prefilled} + ${s.shared} of ${s.prompt} prompt tokens`,
  );
  assert.ok(s.shared > 0 && s.reused > 0);
});

test('a row samples the same alone, in a larger batch and beside rows of other lengths', async () => {
  const req = (rows: number[][]) => ({ ...request(rows, 0), rowSeeds: rows.map((r) => r.length) });
  const [alone] = await plain.generate(req([FIRST[6]]));
  const batched = await plain.generate(req([FIRST[0], FIRST[3], FIRST[6], [...FIRST[0], ...FIRST[3]]]));
  assert.deepEqual(batched[2], alone);
});

test('a row whose prefix does not fit the budget re-prefills and samples the same', async () => {
  // 45 tokens: the system prompt
  const tiny = new Policy({ config, seed: 3, threads: 1, kvCacheBytes: 2 * 2 * 2 * 16 * 4 * 45 });
  const prompts = nextTurn(FIRST, await plain.generate(request(FIRST, 0)), 0);
  await tiny.generate(request(FIRST, 0));
  const before = tiny.generationStats.reused;
  assert.deepEqual(await tiny.generate(request(prompts, 1)), await plain.generate(request(prompts, 1)));
  assert.ok(tiny.generationStats.reused - before <= 7 * SYSTEM.length, 'no row finds more than the system prompt');
  await tiny.close();
});

test('new weights drop the kept prefixes (generation follows the new weights)', async () => {
  const other = new Policy({ config, seed: 4, threads: 1 });
  const own = new Policy({ config, seed: 3, threads: 1, kvCacheBytes: 1 << 24 });
  await own.generate(request(FIRST, 0));
  own.setParams(other.getParams());
  assert.deepEqual(await own.generate(request(FIRST, 0)), await other.generate(request(FIRST, 0)));
  await Promise.all([other.close(), own.close()]);
});

test('rows of one prompt decode as a group and sample what each samples alone, bit for bit, as the group narrows', async () => {
  const [A, B, C] = [FIRST[0], FIRST[3], FIRST[6]];
  const prompts = [A, B, A, A, A, B, A, C]; // groups of 5, 2 and 1, interleaved
  const rowSeeds = prompts.map((_, i) => 40 + i);
  for (const sampling of [{ temperature: 1 }, { temperature: 0.8, topP: 0.9 }]) {
    const base = { prompts, rowSeeds, maxNewTokens: 12, sampling };
    const free = await plain.generate({ ...base, stopTokenIds: [] });
    // every token row 0 never writes stops a row: row 0 writes all 12, the others stop when they write one
    const stops = [...Array(config.vocabSize).keys()].filter((t) => !free[0].tokens.includes(t));
    const req = { ...base, stopTokenIds: stops };
    const before = plain.generationStats.decoded;
    const together = await plain.generate(req);
    const decoded = plain.generationStats.decoded - before;
    const at = JSON.stringify(sampling);
    assert.ok(together.filter((g) => g.tokens.length < 6).length >= 3, `${at}: too few rows stopped early`);
    assert.ok(decoded < 8 * 11, `${at}: ${decoded} rank-steps in 11 steps: the group never narrowed`);
    for (const [r, g] of together.entries()) {
      const [alone] = await plain.generate({ ...req, prompts: [prompts[r]], rowSeeds: [rowSeeds[r]] });
      assert.deepEqual(g, alone, `${at}: row ${r}`);
    }
    const pair = await plain.generate({ ...req, prompts: [A, A], rowSeeds: [rowSeeds[2], rowSeeds[6]] });
    assert.deepEqual(pair, [together[2], together[6]], `${at}: a group of two`);
  }
});

test('a prompt that fills its slots exactly (64 tokens) samples the same beside rows that pad its prefill', async () => {
  const full = FIRST[0].concat(FIRST[3]).slice(0, 64);
  const other = FIRST[6].slice(0, 50); // 50 new tokens: the full row's 24 after its cached 40 are padded to 64
  const req = (prompts: number[][]) => ({ ...request(prompts, 0), rowSeeds: prompts.map((p) => p.length) });
  const own = new Policy({ config, seed: 3, threads: 1, kvCacheBytes: 1 << 24 });
  await own.generate(req([full.slice(0, 41)]));
  const [beside] = await own.generate(req([full, other]));
  await own.close();
  const [alone] = await plain.generate(req([full]));
  assert.deepEqual(beside, alone);
});
