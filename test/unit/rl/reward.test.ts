import { test } from 'node:test';
import assert from 'node:assert/strict';
import { batchFromJSON, batchToJSON, selectRows, tokenTurns } from '../../../src/rl/batch.ts';
import { BatchError } from '../../../src/errors.ts';
import { placeRewards } from '../../../src/rl/reward.ts';
import { batchOf, traj } from './fixtures.ts';

// Row 0: two turns ending at tokens 2 and 5 (tokens 3 is an observation); row 1: one turn ending at 1.
const BATCH = batchOf(
  [
    traj('a', [
      [0.5, 2, 's0', -0.25],
      [1, 5],
    ]),
    traj('a', [[2, 1]]),
  ],
  ['011011', '110000'],
);

test('trajectory-end puts the return (rewards + format penalties) on the last assistant token', () => {
  const { tokenRewards, metrics } = placeRewards({ batch: BATCH, placement: 'trajectory-end' });
  assert.deepEqual(Array.from(tokenRewards), [0, 0, 0, 0, 0, 1.25, 0, 2, 0, 0, 0, 0]);
  assert.deepEqual(metrics, { 'reward/return/mean': 1.625, 'reward/return/min': 1.25, 'reward/return/max': 2 });
});

test("per-turn puts each turn's reward + penalty on that turn's last token", () => {
  const { tokenRewards } = placeRewards({ batch: BATCH, placement: 'per-turn' });
  assert.deepEqual(Array.from(tokenRewards), [0, 0, 0.25, 0, 0, 1, 0, 2, 0, 0, 0, 0]);
});

test('does not mutate the batch', () => {
  const before = JSON.stringify(batchToJSON(BATCH));
  placeRewards({ batch: BATCH, placement: 'per-turn' });
  assert.equal(JSON.stringify(batchToJSON(BATCH)), before);
});

test('rejects a reward position that is not an assistant token', () => {
  const bad = batchOf([traj('a', [[1, 0]])], ['01']);
  assert.throws(() => placeRewards({ batch: bad, placement: 'trajectory-end' }), BatchError);
});

test('rejects assistant tokens after the last turn and non-increasing positions', () => {
  assert.throws(
    () => placeRewards({ batch: batchOf([traj('a', [[1, 0]])], ['11']), placement: 'per-turn' }),
    /after the last turn/,
  );
  const twice = batchOf(
    [
      traj('a', [
        [1, 1],
        [1, 1],
      ]),
    ],
    ['11'],
  );
  assert.throws(() => placeRewards({ batch: twice, placement: 'per-turn' }), /rewardPosition 1/);
});

test('tokenTurns assigns each assistant token to the turn ending at or after it', () => {
  assert.deepEqual(Array.from(tokenTurns(BATCH, 0)), [-1, 0, 0, -1, 1, 1]);
});

test('selectRows and the JSON round trip keep rows and mask', () => {
  const one = selectRows(BATCH, [1]);
  assert.deepEqual(Array.from(one.lossMask), [1, 1, 0, 0, 0, 0]);
  assert.deepEqual(batchFromJSON(JSON.parse(JSON.stringify(batchToJSON(BATCH)))), BATCH);
});
