import { test } from 'node:test';
import assert from 'node:assert/strict';
import { truncatedImportanceSampling } from '../../../src/rl/off-policy.ts';
import { advantageStage } from '../../../src/rl/stages/advantage.ts';
import { resolveConfig } from '../../../src/rl/config.ts';
import type { Batch } from '../../../src/rl/batch.ts';

const f32 = (xs: number[]) => Float32Array.from(xs);

test("each model-written token's advantage is weighted by exp(old − behaviour), truncated at the cap", () => {
  const out = truncatedImportanceSampling({
    advantages: f32([0, 1, -2, 0.5]),
    oldLogprobs: f32([0, -1, -0.5, -3]),
    behaviourLogprobs: f32([0, -1, -1.5, -2]),
    lossMask: f32([0, 1, 1, 1]),
    cap: 2,
  });
  // ratios 1, e ≈ 2.718 (capped at 2), e^−1 ≈ 0.368
  assert.deepEqual(Array.from(out.advantages), [0, 1, -4, Math.fround(0.5 * Math.exp(-1))]);
  assert.equal(out.metrics['tis/ratio_max'], Math.exp(1));
  assert.equal(out.metrics['tis/ratio_mean'], (1 + Math.exp(1) + Math.exp(-1)) / 3);
  assert.equal(out.metrics['tis/capped_share'], 1 / 3);
});

test('positions outside the loss mask keep their value and do not count', () => {
  const out = truncatedImportanceSampling({
    advantages: f32([3, 3]),
    oldLogprobs: f32([0, 5]),
    behaviourLogprobs: f32([0, 0]),
    lossMask: f32([1, 0]),
    cap: 2,
  });
  assert.deepEqual(
    [Array.from(out.advantages), out.metrics['tis/ratio_max'], out.metrics['tis/capped_share']],
    [[3, 3], 1, 0],
  );
});

test('the advantage stage applies the weights only when offPolicyCorrection is tis', () => {
  const batch: Batch = {
    B: 1,
    T: 3,
    lossMask: f32([0, 1, 1]),
    trajectories: [
      {
        groupId: 'g',
        success: false,
        turns: [
          {
            envReward: 1,
            formatPenalty: 0,
            rewardPosition: 2,
            observation: 'a',
            actionsProposed: 1,
            actionsValid: 1,
            actionsEffective: 1,
          },
        ],
      },
    ],
  };
  const rewards = f32([0, 0, 1]);
  const logprobs = { old: f32([0, -1, -1]), behaviour: f32([0, -1, -2]) };
  const plain = resolveConfig({
    overrides: ['advantage=reinforce++', 'critic=false', 'whitenAdvantages=false', 'gamma=1'],
  });
  const tis = resolveConfig({
    overrides: [
      'advantage=reinforce++',
      'critic=false',
      'whitenAdvantages=false',
      'gamma=1',
      'offPolicyCorrection=tis',
      'tisCap=2',
    ],
  });
  const a = advantageStage(plain, batch, rewards, undefined, logprobs);
  const b = advantageStage(tis, batch, rewards, undefined, logprobs);
  assert.deepEqual(Array.from(b.advantages), [0, a.advantages[1], Math.fround(2 * a.advantages[2])]);
  assert.equal(a.metrics['tis/ratio_mean'], undefined);
});
