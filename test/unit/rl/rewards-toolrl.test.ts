import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jaccard, toolrlCorrectness, toolrlReward } from '../../../src/rl/rewards/toolrl.ts';
import { INVALID, fnCall, sample } from './rewards-fixtures.ts';
import type { ExpectedCall } from '../../../src/rl/rewards/types.ts';

const EXPECTED: ExpectedCall[] = [
  { name: 'find_user', arguments: { name: 'Ann' } },
  { name: 'get_borrowed_books', arguments: { user_id: 'U1' } },
];
const close = (a: number, b: number) => assert.ok(Math.abs(a - b) < 1e-12, `${a} ≠ ${b}`);

test('Jaccard of two sets; two empty sets count as equal', () => {
  assert.equal(jaccard(['a', 'b'], ['b', 'c']), 1 / 3);
  assert.equal(jaccard([], []), 1);
});

test('exact calls score 3 whatever their order and key order', () => {
  const calls = [fnCall('get_borrowed_books', { user_id: 'U1' }), fnCall('find_user', { name: 'Ann' })];
  assert.equal(toolrlCorrectness(calls, EXPECTED), 3);
  assert.equal(toolrlCorrectness([], []), 3);
});

test('a wrong value: S = 1 + (1 + 1) + (1 + 0) = 4 of S_max = 5, so 6*4/5 - 3 = 1.8', () => {
  const calls = [fnCall('find_user', { name: 'Ann' }), fnCall('get_borrowed_books', { user_id: 'U2' })];
  close(toolrlCorrectness(calls, EXPECTED), 1.8);
});

test('an extra call lowers the name Jaccard to 2/3: 6*(2/3 + 4)/5 - 3 = 2.6', () => {
  const calls = [
    fnCall('find_user', { name: 'Ann' }),
    fnCall('get_borrowed_books', { user_id: 'U1' }),
    fnCall('search_books', { author: 'X' }),
  ];
  close(toolrlCorrectness(calls, EXPECTED), 2.6);
});

test('a missing key: S = 1 + (1/2 + 1) = 2.5 of 4, so 6*2.5/4 - 3 = 0.75', () => {
  const expected = [{ name: 'compute_late_fee', arguments: { due_day: 95, return_day: 100 } }];
  close(toolrlCorrectness([fnCall('compute_late_fee', { due_day: 95 })], expected), 0.75);
});

test('expected calls take the best unused predicted call in order (greedy): 6*3/5 - 3 = 0.6', () => {
  const expected = [
    { name: 'f', arguments: { a: 1 } },
    { name: 'f', arguments: { a: 2 } },
  ];
  close(toolrlCorrectness([fnCall('f', { a: 2 }), fnCall('f', { a: 3 })], expected), 0.6);
  assert.equal(toolrlCorrectness([fnCall('f', { a: 2 }), fnCall('f', { a: 1 })], expected), 3);
});

test('a missing needed call, an unparsable call or calls where none were needed score -3', () => {
  assert.equal(toolrlCorrectness([fnCall('find_user', { name: 'Ann' })], EXPECTED), -3);
  assert.equal(toolrlCorrectness([...EXPECTED.map((c) => fnCall(c.name, c.arguments)), INVALID], EXPECTED), -3);
  assert.equal(toolrlCorrectness([fnCall('find_user', { name: 'Ann' })], []), -3);
});

test('the reward adds the format term: think first, calls or one answer last', () => {
  const calls = EXPECTED.map((c) => fnCall(c.name, c.arguments));
  const good = '<think>look up</think>\n<tool_call>{}</tool_call><tool_call>{}</tool_call>';
  assert.equal(toolrlReward(sample(true, calls, good, EXPECTED)), 4);
  assert.equal(toolrlReward(sample(true, calls, 'Sure! ' + good, EXPECTED)), 3);
  assert.equal(toolrlReward(sample(true, calls, '<tool_call>{}</tool_call>', EXPECTED)), 3);
  assert.equal(toolrlReward(sample(true, [], '<think>a</think><answer>b</answer><answer>c</answer>', [])), 3);
  assert.equal(toolrlReward(sample(true, [], '<think>a</think> <answer>b</answer>', [])), 4);
  assert.throws(() => toolrlReward(sample(true, [], '')), /no expectedCalls/);
});

test('over a multi-turn trajectory the format term is the share of well-formed turns', () => {
  const calls = EXPECTED.map((c) => fnCall(c.name, c.arguments));
  const turn = '<think>a</think><tool_call>{}</tool_call><answer>b</answer>';
  const turns = [turn, turn, 'no tags'];
  // Joined, the three answers would break the "one answer" rule; turn by turn two of three are well-formed.
  close(toolrlReward({ ...sample(true, calls, turns.join('\n'), EXPECTED), turns }), 3 + 2 / 3);
  assert.equal(toolrlReward({ ...sample(true, calls, turns.join('\n'), EXPECTED), turns: [turn, turn] }), 4);
});
