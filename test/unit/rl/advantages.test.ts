import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ADVANTAGES, type AdvantageParams } from '../../../src/rl/advantages.ts';
import { BatchError } from '../../../src/errors.ts';
import { placeRewards } from '../../../src/rl/reward.ts';
import { batchOf, outcomes, round, traj } from './fixtures.ts';

const P: AdvantageParams = { gamma: 1, lambda: 1, normByStd: true, stepGamma: 0.95, omega: 1 };
// One trajectory, two turns: reward 1 at token 2, reward 2 at token 5; tokens 0 and 3 are observations.
const TWO_TURNS = batchOf(
  [
    traj('a', [
      [1, 2],
      [2, 5],
    ]),
  ],
  ['011011'],
);
const REWARDS = placeRewards({ batch: TWO_TURNS, placement: 'per-turn' }).tokenRewards;
const VALUES = Float32Array.of(9, 0.5, 1, 9, 1.5, 0.25); // 9s sit on observation tokens and must be ignored
const gaeOf = (params: Partial<AdvantageParams>) =>
  ADVANTAGES.gae({ batch: TWO_TURNS, tokenRewards: REWARDS, values: VALUES, params: { ...P, ...params } });

test('GAE with γ = λ = 1 is the masked reward-to-go minus the value, skipping observation tokens', () => {
  const { advantages, returns } = gaeOf({});
  assert.deepEqual(Array.from(advantages), [0, 2.5, 2, 0, 0.5, 1.75]);
  assert.deepEqual(Array.from(returns!), [0, 3, 3, 0, 2, 2]);
});

test("GAE discounts per assistant token and bootstraps from the next assistant token's value", () => {
  assert.deepEqual(Array.from(gaeOf({ gamma: 0.5 }).advantages), [0, 0.25, 0.5, 0, -0.5, 1.75]);
  const td0 = gaeOf({ lambda: 0 });
  assert.deepEqual(Array.from(td0.advantages), [0, 0.5, 1.5, 0, -1.25, 1.75]);
  assert.deepEqual(Array.from(td0.returns!), [0, 1, 2.5, 0, 0.25, 2]);
});

test('GAE needs values and refuses rewards outside the loss mask', () => {
  assert.throws(() => ADVANTAGES.gae({ batch: TWO_TURNS, tokenRewards: REWARDS, params: P }), /needs critic values/);
  const outside = Float32Array.of(1, 0, 0, 0, 0, 0);
  assert.throws(
    () => ADVANTAGES.gae({ batch: TWO_TURNS, tokenRewards: outside, values: VALUES, params: P }),
    BatchError,
  );
});

const outcome = (name: 'grpo' | 'rloo' | 'reinforce++-baseline', groups: Record<string, number[]>, p = P) => {
  const batch = outcomes(groups);
  const { tokenRewards } = placeRewards({ batch, placement: 'trajectory-end' });
  return round(ADVANTAGES[name]({ batch, tokenRewards, params: p }).advantages, 5);
};

test('GRPO divides the centred return by group std + 1e-6 (tolerance 1e-5)', () => {
  assert.deepEqual(outcome('grpo', { a: [1, 0, 0, 1] }), [0.86602, -0.86602, -0.86602, 0.86602]);
});

test('Dr.GRPO (normByStd false) only centres', () => {
  assert.deepEqual(outcome('grpo', { a: [1, 0, 0, 1] }, { ...P, normByStd: false }), [0.5, -0.5, -0.5, 0.5]);
});

test('GRPO gives 0 to a group of one and to a group of equal returns', () => {
  assert.deepEqual(outcome('grpo', { one: [3], same: [0.1, 0.1, 0.1] }), [0, 0, 0, 0]);
});

test('RLOO subtracts the mean of the other returns; a group of one gets 0', () => {
  assert.deepEqual(outcome('rloo', { a: [1, 2, 3], one: [7], same: [0.1, 0.1] }), [-1.5, 0, 1.5, 0, 0, 0]);
});

test('REINFORCE++ whitens discounted token returns over the batch mask', () => {
  const batch = batchOf(
    [
      traj('a', [
        [1, 2],
        [2, 5],
      ]),
      traj('b', [[2, 1]]),
    ],
    ['011011', '110000'],
  );
  const { tokenRewards } = placeRewards({ batch, placement: 'per-turn' });
  const { advantages } = ADVANTAGES['reinforce++']({ batch, tokenRewards, params: P });
  // Masked returns [3, 3, 2, 2 | 2, 2]: mean 7/3, sample std 0.516398.
  assert.deepEqual(round(advantages, 5), [0, 1.29099, 1.29099, 0, -0.6455, -0.6455, -0.6455, -0.6455, 0, 0, 0, 0]);
});

test('REINFORCE++ baseline whitens the return minus its group mean', () => {
  assert.deepEqual(outcome('reinforce++-baseline', { a: [1, 3], b: [2, 2] }), [-1.22474, 1.22474, 0, 0]);
});

test('group advantages are broadcast over exactly the assistant tokens of each row', () => {
  const batch = batchOf(
    [
      traj('a', [
        [1, 2],
        [2, 5],
      ]),
      traj('a', [[1, 1]]),
    ],
    ['011011', '110000'],
  );
  const { tokenRewards } = placeRewards({ batch, placement: 'trajectory-end' });
  const { advantages } = ADVANTAGES.rloo({ batch, tokenRewards, params: P }); // returns 3 and 1
  assert.deepEqual(Array.from(advantages), [0, 2, 2, 0, 2, 2, -2, -2, 0, 0, 0, 0]);
});
