import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PrefixCache } from '../../../src/policy/engine/prefix-cache.ts';
import { sharedLengths } from '../../../src/policy/engine/prefill.ts';

/** A fake row of keys and values: one cache name, one float per token. */
const kv = (ids: number[]) => ({ cache_k_0: Float32Array.from(ids) });

test('a lookup finds the entry sharing the longest prefix, at most `limit` tokens of it', () => {
  const store = new PrefixCache(100);
  store.add([1, 2, 3], kv([1, 2, 3]));
  store.add([1, 2, 7, 8], kv([1, 2, 7, 8]));
  assert.equal(store.match([1, 2, 7, 8, 9])?.length, 4);
  assert.equal(store.match([1, 2, 7, 8, 9], 3)?.length, 3);
  assert.equal(store.match([1, 2, 3, 4])?.length, 3);
  assert.equal(store.match([5, 1, 2]), null);
});

test('an entry another one extends is dropped, and a prefix of a kept entry is not added', () => {
  const store = new PrefixCache(100);
  store.add([1, 2], kv([1, 2]));
  store.add([1, 2, 3], kv([1, 2, 3]));
  store.add([1], kv([1]));
  assert.deepEqual([store.size, store.usedFloats], [1, 3]);
});

test('the least recently used entries go first when the budget is reached; an entry over the budget is not kept', () => {
  const store = new PrefixCache(6);
  store.add([1, 1, 1], kv([1, 1, 1]));
  store.add([2, 2, 2], kv([2, 2, 2]));
  store.match([1, 1, 1, 5]); // used: [2, 2, 2] is now the oldest
  store.add([3, 3], kv([3, 3]));
  assert.deepEqual([store.match([2, 2, 2]), store.match([1, 1, 1])?.length, store.usedFloats], [null, 3, 5]);
  store.add([4, 4, 4, 4, 4, 4, 4], kv([4, 4, 4, 4, 4, 4, 4]));
  assert.equal(store.match([4, 4]), null);
});

test('each prompt shares with the others its longest common prefix with any of them', () => {
  assert.deepEqual(sharedLengths([[1, 2, 3], [1, 2, 4], [1, 5], [6], [1, 2, 3, 9]]), [3, 2, 1, 0, 3]);
});
