import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TOOL_REWARDS, TOOL_REWARD_NAMES, toolMetrics } from '../../../src/rl/rewards/index.ts';
import { blockSequence } from '../../../src/rl/rewards/format.ts';
import { codeCall, sample } from './rewards-fixtures.ts';

test('tool metrics: calls per response, success rate and correct answers per call', () => {
  const m = toolMetrics([
    sample(true, [codeCall(true), codeCall(false)]),
    sample(true, [codeCall(true), codeCall(true, false)]),
    sample(false, []),
    sample(false, [codeCall(true)]),
  ]);
  assert.deepEqual(m, {
    'tool/calls': 4,
    'tool/calls_per_response': 1,
    'tool/success_rate': 0.75,
    'tool/productivity': 0.5,
  });
  assert.deepEqual(toolMetrics([sample(true, [])]), {
    'tool/calls': 0,
    'tool/calls_per_response': 0,
    'tool/success_rate': 0,
    'tool/productivity': 0,
  });
});

test('the registry scores groups by name', () => {
  assert.deepEqual(TOOL_REWARD_NAMES, ['torl', 'toolrl', 'tool-n1', 'artist', 'otc']);
  const torl = TOOL_REWARDS.torl([sample(true, [codeCall(false)]), sample(false, [])], { codeFailPenalty: 0.5 });
  assert.deepEqual(torl, [0.5, -1]);
  const otc = TOOL_REWARDS.otc([sample(true, [codeCall(true)]), sample(true, [])]);
  assert.deepEqual(
    otc.map((x) => Math.round(x * 1e12) / 1e12),
    [0.5, 1],
  );
});

test('responses read as block sequences; stray text or an unclosed block breaks them', () => {
  assert.deepEqual(blockSequence(' <think>a</think>\n```js\nx\n```\n<answer>1</answer> '), ['think', 'call', 'answer']);
  assert.equal(blockSequence('<think>a</think> so <answer>1</answer>'), null);
  assert.equal(blockSequence('<think>a'), null);
  assert.deepEqual(blockSequence(''), []);
});
