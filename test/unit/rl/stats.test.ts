import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pairedDifference } from '../../../src/rl/stats.ts';

test('the paired difference is the mean gain per seed with mean ± 1.96·s/√n', () => {
  // Gains 1, 0, 1, 0: mean 0.5, sample std 0.57735, half-width 1.96 · 0.57735 / 2 = 0.565803.
  const d = pairedDifference([0, 1, 0, 1], [1, 1, 1, 1]);
  assert.equal(d.mean, 0.5);
  assert.ok(Math.abs(d.high - 1.065803) < 1e-6 && Math.abs(d.low + 0.065803) < 1e-6, JSON.stringify(d));
  assert.deepEqual(pairedDifference([0.5], [1]), { mean: 0.5, low: 0.5, high: 0.5 });
});
