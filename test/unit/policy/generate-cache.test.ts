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
  assert.equal(s.prompt, plain.generationStats.prefilled);
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
  assert.deepEqual(await tiny.generate(request(prompts, 1)), await plain.generate(request(prompts, 1)));
  assert.ok(tiny.generationStats.reused <= 2 * 7 * SYSTEM.length, 'no row finds more than the system prompt');
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
