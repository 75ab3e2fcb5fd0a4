import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareMetrics, sameNumber, whyNot } from '../../../src/replay/compare.ts';
import { iterationEvent } from './fixtures.ts';

test('recorded metrics are checked when recomputed and listed otherwise', () => {
  const recorded = iterationEvent({ success_rate: 0.5, 'actor/grad_norm': 2 });
  const cmp = compareMetrics(recorded, { success_rate: 0.5, 'pass@1': 0.5 });
  assert.deepEqual(cmp.checked, ['success_rate', 'event.successRateTrain']);
  assert.deepEqual([cmp.mismatches, cmp.notRecomputable], [[], ['actor/grad_norm']]);
});

test('a recomputed value that differs is a mismatch, in the metrics map and the summary field', () => {
  const cmp = compareMetrics(iterationEvent({ success_rate: 0.5 }), { success_rate: 0.25 });
  assert.deepEqual(cmp.mismatches, [
    { metric: 'success_rate', recorded: 0.5, recomputed: 0.25 },
    { metric: 'event.successRateTrain', recorded: 0.5, recomputed: 0.25 },
  ]);
});

test('equality forgives summation order, not a real difference', () => {
  assert.deepEqual([sameNumber(0.1 + 0.2, 0.3), sameNumber(0.3, 0.3001), sameNumber(NaN, NaN)], [true, false, true]);
});

test('each model-dependent metric family says why events cannot give it', () => {
  assert.equal(whyNot('actor/grad_norm'), 'comes from the update step (losses, gradient norm, clipping, KL)');
  assert.equal(whyNot('val/entropy/mean'), "needs the policy's token distributions");
});
