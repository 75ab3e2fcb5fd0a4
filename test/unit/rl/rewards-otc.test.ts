import { test } from 'node:test';
import assert from 'node:assert/strict';
import { otcRewards, otcToolFactor } from '../../../src/rl/rewards/otc.ts';
import { codeCall, sample } from './rewards-fixtures.ts';

const close = (a: number, b: number) => assert.ok(Math.abs(a - b) < 1e-12, `${a} ≠ ${b}`);
const calls = (m: number, ran = true) => Array.from({ length: m }, () => codeCall(true, ran));

test('the OTC factor is 1 at m = n and falls off on both sides', () => {
  assert.equal(otcToolFactor(2, 2), 1);
  close(otcToolFactor(1, 2), Math.sin(Math.PI / 3)); // f = 4/3
  close(otcToolFactor(4, 2), Math.sin((2 * Math.PI) / 3)); // f = 8/3
  assert.equal(otcToolFactor(0, 3), 0);
});

test('with n = 0 the factor is cos(m*pi/(2m + c))', () => {
  assert.equal(otcToolFactor(0, 0), 1);
  close(otcToolFactor(1, 0), 0.5);
  close(otcToolFactor(2, 0), Math.cos((2 * Math.PI) / 5));
  close(otcToolFactor(1, 0, 4), Math.cos(Math.PI / 6));
});

test('in a group, n is the fewest calls among correct answers and wrong answers score 0', () => {
  const group = [sample(true, calls(2)), sample(true, calls(4)), sample(false, calls(1)), sample(true, calls(1))];
  const r = otcRewards(group);
  close(r[0], Math.sin((2 * Math.PI) / 3)); // f = 4/3, sin(4/3 * pi/2)
  close(r[1], Math.sin(0.8 * Math.PI)); // f = 8/5
  assert.deepEqual([r[2], r[3]], [0, 1]);
});

test('a correct answer without calls sets n = 0; unrun calls do not count; no correct answer scores 0', () => {
  const r = otcRewards([sample(true, calls(0)), sample(true, calls(1)), sample(true, calls(3, false))]);
  assert.equal(r[0], 1);
  close(r[1], 0.5);
  assert.equal(r[2], 1);
  assert.deepEqual(otcRewards([sample(false, calls(1)), sample(false, [])]), [0, 0]);
});
