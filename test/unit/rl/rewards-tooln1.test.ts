import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toolN1Reward } from '../../../src/rl/rewards/tooln1.ts';
import { INVALID, fnCall, sample } from './rewards-fixtures.ts';
import type { ExpectedCall } from '../../../src/rl/rewards/types.ts';

const EXPECTED: ExpectedCall[] = [
  { name: 'compute_late_fee', arguments: { due_day: 95, return_day: 100 } },
  { name: 'get_book', arguments: { book_id: 'B01' } },
];
const THINK = '<think>fees</think>';

test('Tool-N1 pays 1 for think tags and the exact call multiset (any order, any key order)', () => {
  const calls = [fnCall('get_book', { book_id: 'B01' }), fnCall('compute_late_fee', { return_day: 100, due_day: 95 })];
  assert.equal(toolN1Reward(sample(false, calls, THINK, EXPECTED)), 1);
});

test('Tool-N1 pays 0 without think tags, with one different value, an extra call or an unparsable call', () => {
  const exact = EXPECTED.map((c) => fnCall(c.name, c.arguments));
  assert.equal(toolN1Reward(sample(true, exact, '<answer>x</answer>', EXPECTED)), 0);
  assert.equal(toolN1Reward(sample(true, [exact[0], fnCall('get_book', { book_id: 'B02' })], THINK, EXPECTED)), 0);
  assert.equal(toolN1Reward(sample(true, [...exact, exact[1]], THINK, EXPECTED)), 0);
  assert.equal(toolN1Reward(sample(true, [...exact, INVALID], THINK, EXPECTED)), 0);
  assert.equal(toolN1Reward(sample(true, [], '<think></think>', [])), 1);
});

test('over a multi-turn trajectory every turn must reason in think tags', () => {
  const exact = EXPECTED.map((c) => fnCall(c.name, c.arguments));
  const turns = [THINK, '<answer>x</answer>'];
  assert.equal(toolN1Reward({ ...sample(true, exact, turns.join('\n'), EXPECTED), turns }), 0);
  assert.equal(toolN1Reward({ ...sample(true, exact, turns.join('\n'), EXPECTED), turns: [THINK, THINK] }), 1);
});
