import { test } from 'node:test';
import assert from 'node:assert/strict';
import { artistReward, toolSuccessRatio } from '../../../src/rl/rewards/artist.ts';
import { codeCall, sample } from './rewards-fixtures.ts';

const WELL_FORMED = '<think>compute</think>```js\nx\n```\n<answer>\\boxed{4}</answer>';

test('ARTIST adds answer (2), format (1) and the share of calls that succeeded', () => {
  const calls = [codeCall(true), codeCall(true), codeCall(false)];
  assert.equal(artistReward(sample(true, calls, WELL_FORMED)), 2 + 1 + 2 / 3);
  assert.equal(artistReward(sample(false, [codeCall(true), codeCall(false)], 'no tags')), 0.5);
});

test('ARTIST counts only calls that ran; no call means a tool term of 0', () => {
  assert.equal(toolSuccessRatio(sample(true, [codeCall(true), codeCall(false, false)])), 1);
  assert.equal(artistReward(sample(true, [], WELL_FORMED)), 3);
});

test('ARTIST weights and format check are options', () => {
  const s = sample(true, [codeCall(true)], 'so \\boxed{4}');
  assert.equal(artistReward(s, { weights: { answer: 1, tool: 0.5 }, format: 'boxed' }), 1 + 1 + 0.5);
  assert.equal(artistReward(s), 2 + 0 + 1);
});
