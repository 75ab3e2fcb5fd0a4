import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ProgramLru } from '../../../src/policy/engine/program-lru.ts';
import type { Session } from '../../../src/policy/engine/session.ts';

/** A stand-in for a compiled session: only `release` is called by the cache. */
function fakeSession(name: string, released: string[]): Session {
  return { release: async () => void released.push(name) } as unknown as Session;
}

test('the least recently used program is released beyond the limit; a hit renews it', async () => {
  const released: string[] = [];
  const lru = new ProgramLru(2);
  let compiles = 0;
  const get = (k: string) => lru.get(k, async () => (compiles++, fakeSession(k, released)));
  await get('a');
  await get('b');
  await get('a'); // a hit: b is now the least recent
  assert.equal(compiles, 2);
  await get('c');
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(released, ['b']);
  assert.equal(lru.size, 2);
  await get('b'); // compiled again
  assert.equal(compiles, 4);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(released, ['b', 'a']);
  await lru.clear();
  assert.deepEqual(released.sort(), ['a', 'b', 'b', 'c']);
  assert.equal(lru.size, 0);
});

test('a failed compile is forgotten and retried; a train program releases its session', async () => {
  const released: string[] = [];
  const lru = new ProgramLru(4);
  await assert.rejects(
    lru.get('x', () => Promise.reject(new Error('bad graph'))),
    /bad graph/,
  );
  await new Promise((r) => setImmediate(r));
  assert.equal(lru.size, 0);
  await lru.get('x', async () => ({ session: fakeSession('x', released), lossInputs: [], metricNames: [] }));
  await lru.clear();
  assert.deepEqual(released, ['x']);
});
