import { test } from 'node:test';
import assert from 'node:assert/strict';
import { envInfo, styleSlug } from '../../../src/report/env-info.ts';
import { oracleSuccess } from '../../../src/envs/index.ts';

test('legend styles are slugs of the meaning, in the vocabulary the run used', () => {
  assert.equal(styleSlug('player on target'), 'player-on-target');
  const revocab = envInfo({ env: 'sokoban-revocab', valSeeds: 0 }).legend;
  assert.deepEqual(revocab.slice(0, 2), [
    { symbol: 'W', meaning: 'wall', style: 'wall' },
    { symbol: '.', meaning: 'floor', style: 'floor' },
  ]);
  assert.deepEqual(envInfo({ env: 'bandit', valSeeds: 0 }).legend, []);
});

test('the oracle ceiling is over the validation seeds, with the run budget applied', () => {
  const seeds = [2_000_000_000, 2_000_000_001, 2_000_000_002, 2_000_000_003];
  const expected = oracleSuccess({ type: 'sokoban', maxTurns: 1, maxActionsPerTurn: 2 }, seeds).successRate;
  const info = envInfo({ env: 'sokoban', valSeeds: 4, maxTurns: 1, maxActionsPerTurn: 2, maxActionsPerTrajectory: 0 });
  assert.deepEqual(info.oracle, { successRate: expected, seeds: 4 });
  assert.equal(envInfo({ env: 'sokoban', valSeeds: 0 }).oracle, null);
});

test('an unknown environment gives no legend and no ceiling', () => {
  assert.deepEqual(envInfo({ env: 'no-such-env' as never, valSeeds: 4 }), { env: null, legend: [], oracle: null });
});
