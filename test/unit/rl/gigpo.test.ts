import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ADVANTAGES, computeAdvantages, type AdvantageParams, whitenMasked } from '../../../src/rl/advantages.ts';
import { placeRewards } from '../../../src/rl/reward.ts';
import { batchOf, round, traj } from './fixtures.ts';
import { readFileSync } from 'node:fs';

const P: AdvantageParams = { gamma: 1, lambda: 1, normByStd: false, stepGamma: 0.5, omega: 1 };
// Group g: both start in state S; one then sees A and earns 1, the other sees B and earns 0.
// Group h also starts in "S" but is another environment group, so its step is not compared with g's.
const BATCH = batchOf(
  [
    traj('g', [
      [0, 0, 'S'],
      [1, 1, 'A'],
    ]),
    traj('g', [
      [0, 0, 'S'],
      [0, 1, 'B'],
    ]),
    traj('h', [[5, 0, 'S']]),
  ],
  ['11', '11', '10'],
);
const gigpo = (p: Partial<AdvantageParams> = {}) =>
  ADVANTAGES.gigpo({ batch: BATCH, tokenRewards: new Float32Array(6), params: { ...P, ...p } });

test('GiGPO adds the anchor-group step advantage to the episode advantage on each turn', () => {
  // A_E = ±0.5; step returns at S: 0.5 (= 0 + 0.5·1) and 0 → ±0.25; A and B are step groups of one → 0.
  const { advantages, metrics } = gigpo();
  assert.deepEqual(Array.from(advantages), [0.75, 0.5, -0.75, -0.5, 0, 0]);
  assert.deepEqual(metrics['gigpo/step_groups'], 4);
  assert.deepEqual(metrics['gigpo/singleton_step_group_fraction'], 0.75);
});

test('GiGPO weighs the step advantage by ω and can divide by std', () => {
  assert.deepEqual(Array.from(gigpo({ omega: 2 }).advantages), [1, 0.5, -1, -0.5, 0, 0]);
  // Pairs ±0.5 and ±0.25 have sample std 0.7071 and 0.3536: each normalises to ±0.707106.
  assert.deepEqual(round(gigpo({ normByStd: true }).advantages, 5), [1.41421, 0.70711, -1.41421, -0.70711, 0, 0]);
});

test('whitening uses the masked mean and n−1 variance and zeroes unmasked entries', () => {
  const xs = [1, 100, 3];
  assert.deepEqual(round(whitenMasked(xs, [1, 0, 1]), 5), [-0.70711, 0, 0.70711]);
  assert.deepEqual(round(whitenMasked(xs, [1, 0, 1], { unbiased: false }), 5), [-1, 0, 1]);
  assert.deepEqual(round(whitenMasked(xs, [1, 0, 1], { shiftMean: false, unbiased: false }), 5), [1, 0, 3]);
});

test('computeAdvantages composes the estimator with optional whitening', () => {
  const batch = batchOf([traj('a', [[1, 0]]), traj('a', [[3, 0]])], ['1', '1']);
  const { tokenRewards } = placeRewards({ batch, placement: 'trajectory-end' });
  const input = { batch, tokenRewards, params: { ...P, normByStd: false } };
  assert.deepEqual(Array.from(computeAdvantages({ ...input, estimator: 'grpo', whiten: false }).advantages), [-1, 1]);
  const whitened = computeAdvantages({ ...input, estimator: 'grpo', whiten: true });
  assert.deepEqual(round(whitened.advantages, 5), [-0.70711, 0.70711]);
});

// Turns as [env reward, token position, anchor, format penalty]; one assistant token per turn.
const PENALISED = batchOf(
  [
    traj('g', [
      [0, 0, 'S', 0],
      [1, 1, 'A', -0.1],
    ]),
    traj('g', [
      [0, 0, 'S', -0.1],
      [0, 1, 'B', 0],
      [0, 2, 'C', 0],
    ]),
    traj('h', [
      [2, 0, 'S', 0],
      [0, 1, 'T', 0],
    ]),
  ],
  ['110', '111', '110'],
);
const onPenalised = (p: Partial<AdvantageParams>) =>
  round(
    ADVANTAGES.gigpo({ batch: PENALISED, tokenRewards: new Float32Array(9), params: { ...P, ...p } }).advantages,
    5,
  );

test("GiGPO in verl-agent's form: episode mean over step rows, each turn's penalty after discounting", () => {
  // Row scores in g (env return + the row's penalty): 1, 0.9, −0.1, 0, 0 → mean 0.36. Step returns at S:
  // 0 + 0.5·1 = 0.5 and 0 − 0.1 = −0.1 → ±0.3. h's rows score 2 and 2 → 0.
  assert.deepEqual(onPenalised({ gigpoForm: 'verl-agent' }), [0.94, 0.54, 0, -0.76, -0.36, -0.36, 0, 0, 0]);
});

test("GiGPO in the paper's Eq. 3 form on the same batch: per-trajectory returns, penalties discounted", () => {
  // R = 0.9 and −0.1 → ±0.5. Step returns at S: 0 + 0.5·0.9 = 0.45 and −0.1 → ±0.275.
  assert.deepEqual(onPenalised({ gigpoForm: 'paper' }), [0.775, 0.5, 0, -0.775, -0.5, -0.5, 0, 0, 0]);
});

test("GiGPO's verl-agent form equals scripts/gigpo_reference.py in both of verl-agent's modes", () => {
  const fixture = JSON.parse(readFileSync(new URL('../../fixtures/rl/gigpo-verl-agent.json', import.meta.url), 'utf8'));
  const tokens = (perRow: number[]) =>
    round([perRow[0], perRow[1], 0, perRow[2], perRow[3], perRow[4], perRow[5], perRow[6], 0], 5);
  assert.deepEqual(onPenalised({ gigpoForm: 'verl-agent', stepGamma: fixture.gamma }), tokens(fixture.mean_norm));
  assert.deepEqual(onPenalised({ gigpoForm: 'verl-agent', normByStd: true }), tokens(fixture.mean_std_norm));
});
