import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planRetention } from '../../../src/storage/retention.ts';
import { ConfigError } from '../../../src/errors.ts';

const ids = (lineageId: string, iterations: number[]) =>
  iterations.map((iteration) => ({ runId: 'r', lineageId, iteration }));
const its = (list: { iteration: number }[]) => list.map((c) => c.iteration);

test('keeps the last k and every n-th iteration', () => {
  const plan = planRetention(ids('L0', [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]), { keepLast: 2, keepEvery: 5 });
  assert.deepEqual(its(plan.keep), [5, 10, 11, 12]);
  assert.deepEqual(its(plan.drop), [1, 2, 3, 4, 6, 7, 8, 9]);
});

test('without milestones only the last k survive', () => {
  assert.deepEqual(its(planRetention(ids('L0', [3, 1, 2]), { keepLast: 1, keepEvery: 0 }).keep), [3]);
});

test('fewer checkpoints than k are all kept', () => {
  assert.deepEqual(planRetention(ids('L0', [1, 2]), { keepLast: 5, keepEvery: 0 }).drop, []);
});

test('each lineage keeps its own last k', () => {
  const plan = planRetention([...ids('L0', [1, 2, 3]), ...ids('L1', [3, 4])], { keepLast: 1, keepEvery: 0 });
  assert.deepEqual(
    plan.keep.map((c) => `${c.lineageId}@${c.iteration}`),
    ['L0@3', 'L1@4'],
  );
});

test('iteration 0 counts as a milestone of every n', () => {
  assert.deepEqual(its(planRetention(ids('L0', [0, 1, 2, 3]), { keepLast: 1, keepEvery: 2 }).keep), [0, 2, 3]);
});

test('a policy that would keep nothing to resume from is refused', () => {
  assert.throws(() => planRetention([], { keepLast: 0, keepEvery: 10 }), ConfigError);
  assert.throws(() => planRetention([], { keepLast: 1, keepEvery: -1 }), /retention.keepEvery/);
});
