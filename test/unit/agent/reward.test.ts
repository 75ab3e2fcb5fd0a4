import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loggedReturn, signedPenalty, trajectoryReturn, turnReward } from '../../../src/agent/reward.ts';

test('a turn reward is the environment reward plus the ≤ 0 format penalty, and the return sums the turn rewards', () => {
  assert.equal(turnReward({ envReward: 1, formatPenalty: -0.25 }), 0.75);
  const turns = [
    { envReward: 1, formatPenalty: 0 },
    { envReward: -0.25, formatPenalty: -0.25 },
  ];
  assert.equal(trajectoryReturn(turns), 0.5);
  assert.equal(signedPenalty(0.1), -0.1);
  assert.ok(Object.is(signedPenalty(0), -0)); // what an un-penalised turn has always logged
});

test('the logged return adds reward and penalty to the running sum one after the other, unlike the return', () => {
  const turns = [
    { envReward: 1, formatPenalty: 0 },
    { envReward: -0.2, formatPenalty: -0.1 },
  ];
  assert.equal(loggedReturn(turns), 0.7000000000000001); // (1 − 0.2) − 0.1
  assert.equal(trajectoryReturn(turns), 0.7); // 1 + (−0.2 − 0.1)
});
