import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mapLimit } from '../../../src/storage/map-limit.ts';

const tick = () => new Promise((r) => setImmediate(r));

test('runs at most `limit` calls at once and returns the results in input order', async () => {
  let running = 0;
  let most = 0;
  const out = await mapLimit([5, 1, 4, 2, 3], 2, async (x, i) => {
    running++;
    most = Math.max(most, running);
    for (let k = 0; k < x; k++) await tick();
    running--;
    return `${i}:${x}`;
  });
  assert.deepEqual(out, ['0:5', '1:1', '2:4', '3:2', '4:3']);
  assert.equal(most, 2);
});

test('rejects with the first failure and starts no call after it', async () => {
  const started: number[] = [];
  await assert.rejects(
    mapLimit([1, 2, 3, 4], 1, async (x) => {
      started.push(x);
      if (x === 2) throw new Error('no 2');
      return x;
    }),
    /no 2/,
  );
  assert.deepEqual(started, [1, 2]);
});
