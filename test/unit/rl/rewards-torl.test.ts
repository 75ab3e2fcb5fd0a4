import { test } from 'node:test';
import assert from 'node:assert/strict';
import { torlReward } from '../../../src/rl/rewards/torl.ts';
import { codeCall, fnCall, sample } from './rewards-fixtures.ts';

test('ToRL pays +1 for a right answer and -1 otherwise', () => {
  assert.equal(torlReward(sample(true, [])), 1);
  assert.equal(torlReward(sample(false, [codeCall(true)])), -1);
});

test('ToRL subtracts the code-failure penalty only when asked and only for code that ran and failed', () => {
  const failed = [codeCall(true), codeCall(false)];
  assert.equal(torlReward(sample(true, failed)), 1);
  assert.equal(torlReward(sample(true, failed), { codeFailPenalty: 0.5 }), 0.5);
  assert.equal(torlReward(sample(false, failed), { codeFailPenalty: 0.5 }), -1.5);
  assert.equal(torlReward(sample(true, [codeCall(false, false)]), { codeFailPenalty: 0.5 }), 1);
  assert.equal(torlReward(sample(true, [fnCall('f', {}, false)]), { codeFailPenalty: 0.5 }), 1);
});
