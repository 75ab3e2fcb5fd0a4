import { test } from 'node:test';
import assert from 'node:assert/strict';
import { batchMetrics, explainedVariance, passAtK } from '../../../src/rl/metrics.ts';
import { batchOf, outcomes, round, traj } from './fixtures.ts';
import { KEPT_TOKENS, TOKENS_GENERATED } from '../../../src/rl/metric-names.ts';

test('pass@k is the unbiased 1 − C(n−c, k)/C(n, k)', () => {
  assert.equal(passAtK(4, 1, 2), 0.5); // 1 − C(3,2)/C(4,2) = 1 − 3/6
  assert.equal(round([passAtK(5, 2, 1)])[0], 0.4);
  assert.deepEqual([passAtK(4, 0, 3), passAtK(4, 3, 2), passAtK(16, 16, 16)], [0, 1, 1]);
  assert.throws(() => passAtK(2, 1, 3), /1 ≤ k ≤ n/);
});

test('batch metrics: success, pass@k, returns and in-group std over all and kept groups', () => {
  const batch = outcomes({ a: [1, 0], b: [2, 2] }); // success = return > 0
  const m = batchMetrics({ batch, keptGroupIds: ['a'], passK: [1, 2, 3] });
  assert.deepEqual(
    round([m.success_rate, m['pass@1'], m['pass@2'], m['return/mean'], m['return/std']]),
    [0.75, 0.75, 1, 1.25, 0.957427],
  );
  assert.deepEqual(
    round([m['in_group_std/all'], m['in_group_std/kept'], m['kept/trajectories']]),
    [0.353553, 0.707107, 2],
  );
  assert.equal(m['pass@3'], undefined); // no group has 3 samples
});

test('valid and effective action ratios are over proposed actions; lengths count assistant tokens', () => {
  const t = traj('a', [
    [0, 1, '', -0.1],
    [0, 3],
  ]);
  const turns = [{ ...t.turns[0], actionsProposed: 3, actionsValid: 2, actionsEffective: 1 }, t.turns[1]];
  const m = batchMetrics({ batch: batchOf([{ ...t, turns }], ['0111']) });
  assert.deepEqual(
    round([m['actions/valid_ratio'], m['actions/effective_ratio'], m.format_penalty_rate]),
    [0.75, 0.5, 0.5],
  );
  assert.deepEqual([m['response_length/mean'], m['turns/mean']], [3, 2]);
});

test("tokens: every trajectory's assistant tokens, and those of the kept groups", () => {
  const rows = [traj('a', [[0, 1]]), traj('a', [[1, 1]]), traj('b', [[0, 1]])];
  const batch = batchOf(rows, ['0110', '1111', '0001']);
  const m = batchMetrics({ batch, keptGroupIds: ['b'] });
  assert.deepEqual([m[TOKENS_GENERATED], m[KEPT_TOKENS]], [7, 1]);
  // Without a filter's choice (validation) there is nothing kept to count.
  assert.equal(KEPT_TOKENS in batchMetrics({ batch }), false);
});

test('explained variance is 1 for values off by a constant and ≈ 0 for constant values', () => {
  assert.equal(explainedVariance([0, 1, 9, 2], [1, 2, 0, 3], [1, 1, 0, 1]), 1);
  assert.equal(round([explainedVariance([0, 0, 0], [1, 2, 3], [1, 1, 1])], 4)[0], 0);
});

test('entropy mean is taken over the loss mask only', () => {
  const batch = batchOf([traj('a', [[1, 1]])], ['0110']);
  assert.equal(batchMetrics({ batch, entropy: [9, 1, 2, 9] })['entropy/mean'], 1.5);
});
