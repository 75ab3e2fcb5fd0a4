/**
 * The loss oracle against values worked out by hand, so that the oracle (and through loss-engine.test.ts the
 * engine's graph) means the published formulas of docs/algorithms.md, not merely whatever the graph computes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PpoLoss } from '../../../src/policy/programs/loss.ts';
import { aggregate, oracleLoss, pgToken, type OracleInput } from './loss-oracle.ts';
import { round } from '../rl/fixtures.ts';

const P: PpoLoss = {
  kind: 'ppo',
  clipLow: 0.2,
  clipHigh: 0.28,
  dualClip: 3,
  entropyCoef: 0,
  kl: null,
  aggregation: 'token-mean',
};
/** One row; old log-probs 0 and logp = ln(ratio), so each token's ratio is given directly. */
function row(ratios: number[], advantages: number[], mask: number[], extra: Partial<OracleInput> = {}): OracleInput {
  return {
    B: 1,
    T: ratios.length,
    mask,
    logp: ratios.map(Math.log),
    entropy: ratios.map(() => 0),
    ...extra,
    inputs: { advantages, old_logprobs: ratios.map(() => 0), ...extra.inputs },
  };
}
// Tokens: inside the clip range; above 1 + 0.28 with A > 0; below 1 − 0.2 with A < 0; masked out.
const caseRow = (extra: Partial<OracleInput> = {}) => row([1.1, 1.5, 0.5, 9], [1, 1, -1, 100], [1, 1, 1, 0], extra);
const CASE = caseRow();

test('clipped surrogate per token and its token mean; masked tokens count nowhere', () => {
  const tokens = [1.1, 1.5, 0.5].map((r, i) => pgToken(Math.log(r), 0, [1, 1, -1][i], P).loss);
  assert.deepEqual(round(tokens), [-1.1, -1.28, 0.8]);
  assert.equal(round([oracleLoss(P, CASE).metrics.pg_loss])[0], -0.526667);
});

test('clip_frac counts trained tokens whose clipped term is strictly the larger one', () => {
  assert.equal(round([oracleLoss(P, CASE).metrics.clip_frac])[0], 0.666667);
});

test('dual clip bounds a negative-advantage token at −A·c; null turns it off', () => {
  assert.equal(oracleLoss(P, row([5], [-1], [1])).loss, 3);
  assert.equal(round([oracleLoss({ ...P, dualClip: null }, row([5], [-1], [1])).loss])[0], 5);
});

test('approx_kl is the token mean of old − new log-prob, clamped to ±20 as verl ppo_kl', () => {
  assert.equal(round([oracleLoss(P, CASE).metrics.approx_kl])[0], 0.064124);
  const stale = row([1, 1], [1, 1], [1, 1], { logp: [25, -30] });
  assert.equal(oracleLoss(P, stale).metrics.approx_kl, 0); // (−20 + 20) / 2: neither −25 nor +30 gets through
});

test('KL to the reference (k1, k3) and the entropy bonus enter the total with their signs', () => {
  const extra = { entropy: [1, 2, 3, 100], inputs: { ref_logprobs: [0, 0, 0, 0] } };
  const k1 = oracleLoss({ ...P, entropyCoef: 0.01, kl: { coef: 0.5, estimator: 'k1' } }, caseRow(extra));
  assert.deepEqual(round([k1.metrics.kl_ref, k1.metrics.entropy, k1.loss]), [-0.064124, 2, -0.578729]);
  const k3 = oracleLoss({ ...P, kl: { coef: 0.5, estimator: 'k3' } }, caseRow(extra));
  assert.equal(round([k3.metrics.kl_ref])[0], 0.127795);
});

test('token-mean, seq-mean-token-mean and seq-mean-token-sum aggregate differently', () => {
  const x = [1, 2, 3, 4];
  const at = (mask: number[]) =>
    (['token-mean', 'seq-mean-token-mean', 'seq-mean-token-sum'] as const).map((mode) =>
      aggregate((i) => x[i], { B: 2, T: 2, mask, inputs: {} }, mode),
    );
  assert.deepEqual(at([1, 1, 1, 0]), [2, 2.25, 3]);
});

test('seq-mean forms divide by the rows that have a trained token, as verl since its PR #3915', () => {
  const x = [1, 2, 3, 4];
  const input = { B: 2, T: 2, mask: [1, 0, 0, 0], inputs: {} };
  const modes = ['seq-mean-token-sum', 'seq-mean-token-mean'] as const;
  const [sum, mean] = modes.map((m) => aggregate((i) => x[i], input, m));
  assert.deepEqual([sum, mean], [1, 1]); // dividing by both rows would give 0.5
});

test('value loss is 0.5·max of the unclipped and clipped squared errors', () => {
  const out = oracleLoss(
    { kind: 'value', clip: 0.5, aggregation: 'token-mean' },
    {
      B: 1,
      T: 4,
      mask: [1, 1, 1, 0],
      values: [1, 1, 3, 50],
      inputs: { old_values: [0, 1, 0, 0], returns: [2, 0, 0, 0] },
    },
  );
  assert.deepEqual(round([out.loss, out.metrics.vf_clip_frac, out.metrics.value_mean]), [2.041667, 0.333333, 1.666667]);
});

test('SFT loss is the masked mean of −log p(target)', () => {
  const logp = [Math.log(0.5), Math.log(0.75), -7];
  const input = { B: 1, T: 3, mask: [1, 1, 0], logp, entropy: [1, 2, 9], inputs: {} };
  const out = oracleLoss({ kind: 'sft', aggregation: 'token-mean' }, input);
  assert.deepEqual(round([out.loss, out.metrics.entropy]), [0.490415, 1.5]); // (ln 2 − ln 0.75) / 2
});
