import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BanditEnv, BANDIT } from '../../../src/envs/bandit.ts';
import { resolveEnvConfig } from '../../../src/envs/registry.ts';

const env = new BanditEnv(BANDIT.defaults);

test('the arm order depends on the seed and repeats for the same seed', () => {
  const orders = new Set<string>();
  for (let seed = 0; seed < 50; seed++) orders.add(env.reset(seed));
  assert.deepEqual([...orders].sort(), ['Arms: Dragon, Phoenix', 'Arms: Phoenix, Dragon']);
  assert.equal(env.reset(7), env.reset(7));
});

test('the low arm always pays 0.1 and pulling it is not a success', () => {
  for (let seed = 0; seed < 20; seed++) {
    env.reset(seed);
    const r = env.step('Phoenix');
    assert.deepEqual([r.reward, r.done, r.success], [0.1, true, false]);
  }
});

test('the high arm pays 1 about a quarter of the time (4000 seeds, ±0.03) and always succeeds', () => {
  let paid = 0;
  for (let seed = 0; seed < 4000; seed++) {
    env.reset(seed);
    const r = env.step('Dragon');
    assert.ok(r.success && (r.reward === 0 || r.reward === 1));
    paid += r.reward;
  }
  assert.ok(Math.abs(paid / 4000 - 0.25) < 0.03, String(paid / 4000));
});

test('arm names match case-insensitively; anything else is not an action', () => {
  assert.deepEqual(
    ['dragon', ' PHOENIX ', 'Dragon!', 'Trader'].map((t) => env.matchAction(t)),
    ['Dragon', 'Phoenix', null, null],
  );
});

test('the reversed preset makes Phoenix the high arm', () => {
  const reversed = new BanditEnv(resolveEnvConfig('bandit-reversed') as typeof BANDIT.defaults);
  reversed.reset(0);
  assert.equal(reversed.step('Phoenix').success, true);
});

test("the oracle reports both arms' expected values", () => {
  assert.deepEqual(BANDIT.oracle!(BANDIT.defaults, 0), {
    success: 1,
    detail: { lowExpected: 0.1, highExpected: 0.25 },
  });
});
