import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  entropyFromLogits, LOSS_AGGREGATIONS, maskedCrossEntropy, type PolicyLossParams, policyLoss, valueLoss,
} from '../../../src/rl/losses.ts';
import { round } from './fixtures.ts';

const P: PolicyLossParams = {
  clipLow: 0.2, clipHigh: 0.28, dualClip: 3, entropyCoef: 0, klCoef: 0, klEstimator: 'k1', aggregation: 'token-mean',
};
/** One row; oldLogp 0 and logp = ln(ratio), so each token's ratio is given directly. */
const pg = (ratios: number[], advantages: number[], mask: number[], params: Partial<PolicyLossParams> = {}, extra = {}) =>
  policyLoss({
    B: 1, T: ratios.length, mask, logp: ratios.map(Math.log), oldLogp: ratios.map(() => 0), advantages,
    params: { ...P, ...params }, ...extra,
  });
// Tokens: inside the clip range; above 1 + 0.28 with A > 0; below 1 − 0.2 with A < 0; masked out.
const CASE = [[1.1, 1.5, 0.5, 9], [1, 1, -1, 100], [1, 1, 1, 0]] as const;

test('clipped surrogate per token and its token mean; masked tokens count nowhere (tolerance 1e-6)', () => {
  const out = pg([...CASE[0]], [...CASE[1]], [...CASE[2]]);
  assert.deepEqual(round(out.tokenPgLoss), [-1.1, -1.28, 0.8, 0]);
  assert.equal(round([out.pgLoss])[0], -0.526667);
});

test('clip fraction counts masked tokens whose clipped term is strictly the larger one', () => {
  const { metrics } = pg([...CASE[0]], [...CASE[1]], [...CASE[2]]);
  assert.equal(round([metrics['actor/clip_fraction']])[0], 0.666667);
  assert.equal(metrics['actor/dual_clip_fraction'], 0);
});

test('dual clip bounds a negative-advantage token at −A·c; 0 turns it off', () => {
  const on = pg([5], [-1], [1]);
  assert.deepEqual([on.pgLoss, on.metrics['actor/dual_clip_fraction'], on.metrics['actor/clip_fraction']], [3, 1, 0]);
  assert.equal(round([pg([5], [-1], [1], { dualClip: 0 }).pgLoss])[0], 5);
});

test('approx KL is the token mean of old − new logp; the k3 form is also reported', () => {
  const { metrics } = pg([...CASE[0]], [...CASE[1]], [...CASE[2]]);
  assert.deepEqual(round([metrics['actor/approx_kl'], metrics['actor/approx_kl_k3']]), [0.064124, 0.097457]);
});

test('KL to the reference (k1, k3) and the entropy bonus enter the total with their signs', () => {
  const extra = { refLogp: [0, 0, 0, 0], entropy: [1, 2, 3, 100] };
  const k1 = pg([...CASE[0]], [...CASE[1]], [...CASE[2]], { klCoef: 0.5, entropyCoef: 0.01 }, extra);
  assert.deepEqual(round([k1.kl, k1.entropy, k1.loss]), [-0.064124, 2, -0.578729]);
  const k3 = pg([...CASE[0]], [...CASE[1]], [...CASE[2]], { klCoef: 0.5, klEstimator: 'k3' }, extra);
  assert.equal(round([k3.kl])[0], 0.127795);
});

test('KL or entropy coefficients without their inputs are refused', () => {
  assert.throws(() => pg([1], [1], [1], { klCoef: 0.1 }), /needs refLogp/);
  assert.throws(() => pg([1], [1], [1], { entropyCoef: 0.1 }), /needs entropy/);
});

test('token-mean, seq-mean-token-mean and seq-mean-token-sum aggregate differently', () => {
  const x = [1, 2, 3, 4];
  const mask = [1, 1, 1, 0];
  const all = Object.values(LOSS_AGGREGATIONS).map((agg) => agg(x, mask, 2, 2));
  assert.deepEqual(all, [2, 2.25, 3]);
  assert.deepEqual(Object.values(LOSS_AGGREGATIONS).map((agg) => agg(x, [1, 0, 0, 0], 2, 2)), [1, 1, 0.5]);
});

test('value loss is 0.5·max of the unclipped and clipped squared errors', () => {
  const out = valueLoss({
    B: 1, T: 4, mask: [1, 1, 1, 0], values: [1, 1, 3, 50], oldValues: [0, 1, 0, 0], returns: [2, 0, 0, 0],
    clip: 0.5, aggregation: 'token-mean',
  });
  assert.deepEqual(round([out.loss, out.metrics['critic/clip_fraction']]), [2.041667, 0.333333]);
});

test('masked cross-entropy averages −log p(target) over masked tokens; entropy of uniform logits is ln V', () => {
  // Rows: [0, 0] → p(0) = 1/2; [0, ln 3] → p(1) = 3/4; the third token is masked (its target is not even valid).
  const logits = [0, 0, 0, Math.log(3), 5, 5];
  const ce = maskedCrossEntropy({ B: 1, T: 3, V: 2, logits, targets: [0, 1, 7], mask: [1, 1, 0], aggregation: 'token-mean' });
  assert.equal(round([ce.loss])[0], 0.490415); // (ln 2 − ln 0.75) / 2
  assert.equal(round([entropyFromLogits([0, 0, 0, 0])])[0], 1.386294); // ln 4
});
