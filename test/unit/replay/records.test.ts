import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compactBatch, rolloutOrder, trajectoryRecordOf } from '../../../src/replay/records.ts';
import { trajectory } from './fixtures.ts';

const twoTurns = () => {
  const e = trajectory({ seed: 4, group: 3, rollout: 1, response: 'P' });
  return {
    ...e,
    turns: [
      { ...e.turns[0], responseTokens: 3 },
      { ...e.turns[0], responseTokens: 2 },
    ],
  };
};

test("a record keys its group seed:group and puts each turn reward on the turn's last written token", () => {
  const r = trajectoryRecordOf(twoTurns(), [2, 1]);
  assert.equal(r.groupId, '4:3');
  const turns = r.turns.map((t) => [t.rewardPosition, t.actionsProposed, t.actionsValid, t.envReward]);
  assert.deepEqual(turns, [
    [2, 2, 1, 0.1],
    [4, 1, 1, 0.1],
  ]);
});

test('the compact layout holds exactly the written tokens of each row', () => {
  const events = [twoTurns(), trajectory({ seed: 1, group: 0, rollout: 0, response: 'PPP' })];
  const batch = compactBatch(
    events,
    events.map((e) => trajectoryRecordOf(e, [1, 1])),
  );
  assert.deepEqual([batch.B, batch.T], [2, 5]);
  assert.deepEqual(Array.from(batch.lossMask), [1, 1, 1, 1, 1, 1, 1, 1, 1, 0]);
});

test('rollout order is group, then rollout index', () => {
  const events = [
    [1, 1],
    [0, 1],
    [1, 0],
    [0, 0],
  ].map(([group, rollout]) => trajectory({ seed: 1, group, rollout, response: 'P' }));
  assert.deepEqual(
    rolloutOrder(events).map((e) => `${e.group}/${e.rolloutIndex}`),
    ['0/0', '0/1', '1/0', '1/1'],
  );
});
