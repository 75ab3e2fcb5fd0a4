import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CorruptDataError } from '../../../src/errors.ts';
import { SamplingRng } from '../../../src/policy/sampling/rng.ts';

test('matches the xoshiro128** reference outputs from state (1, 2, 3, 4)', () => {
  const rng = SamplingRng.fromState('00000001000000020000000300000004');
  assert.deepEqual([rng.nextU32(), rng.nextU32(), rng.nextU32(), rng.nextU32()], [11520, 0, 5927040, 70819200]);
});

test('the same seed gives the same sequence; streams and seeds differ', () => {
  const draw = (rng: SamplingRng) => Array.from({ length: 5 }, () => rng.next());
  assert.deepEqual(draw(SamplingRng.fromSeed(7)), draw(SamplingRng.fromSeed(7)));
  assert.notDeepEqual(draw(SamplingRng.fromSeed(7)), draw(SamplingRng.fromSeed(8)));
  assert.notDeepEqual(draw(SamplingRng.fromSeed(7, 0)), draw(SamplingRng.fromSeed(7, 1)));
});

test('a saved state resumes the sequence exactly', () => {
  const rng = SamplingRng.fromSeed(123);
  for (let i = 0; i < 10; i++) rng.next();
  const restored = SamplingRng.fromState(rng.getState());
  assert.match(rng.getState(), /^[0-9a-f]{32}$/);
  assert.deepEqual([restored.next(), restored.next()], [rng.next(), rng.next()]);
});

test('next() is uniform on [0, 1)', () => {
  const rng = SamplingRng.fromSeed(1);
  const bins = new Array(10).fill(0);
  for (let i = 0; i < 100_000; i++) {
    const u = rng.next();
    assert.ok(u >= 0 && u < 1);
    bins[Math.floor(u * 10)]++;
  }
  for (const b of bins) assert.ok(Math.abs(b - 10_000) < 400, `bin count ${b}`);
});

test('a malformed state is corrupt data', () => {
  assert.throws(() => SamplingRng.fromState('xyz'), CorruptDataError);
  assert.throws(() => SamplingRng.fromState('0'.repeat(32)), CorruptDataError);
});
