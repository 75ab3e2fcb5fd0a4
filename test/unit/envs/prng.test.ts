import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Prng } from '../../../src/envs/prng.ts';
import { ConfigError } from '../../../src/errors.ts';

test('a seed gives a fixed stream (golden values, the same on every machine)', () => {
  const p = new Prng(0);
  assert.deepEqual([p.nextU32(), p.nextU32(), p.nextU32()], [606757137, 3191005293, 2265906853]);
  assert.equal(new Prng(2 ** 40 + 3, 1).nextU32(), 1277414224);
});

test('streams of one seed and seeds differing only above 32 bits are independent', () => {
  assert.notEqual(new Prng(7, 0).nextU32(), new Prng(7, 1).nextU32());
  assert.notEqual(new Prng(5).nextU32(), new Prng(5 + 2 ** 32).nextU32());
});

test('int(n) stays in [0, n) and hits every value', () => {
  const p = new Prng(1);
  const seen = new Set<number>();
  for (let i = 0; i < 1000; i++) seen.add(p.int(6));
  assert.deepEqual([...seen].sort(), [0, 1, 2, 3, 4, 5]);
});

test('rejects negative, fractional and unsafe seeds', () => {
  for (const seed of [-1, 1.5, 2 ** 53, Number.NaN]) assert.throws(() => new Prng(seed), ConfigError);
});
