import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AsyncQueue } from '../../../src/events/async-queue.ts';
import { chunkBySize } from '../../../src/events/kafka-log.ts';

async function drain<T>(queue: AsyncQueue<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of queue) out.push(item);
  return out;
}

test('a full queue makes the writer wait until the reader takes an item', async () => {
  const queue = new AsyncQueue<number>(2);
  const pushes = [1, 2, 3].map((n) => queue.push(n));
  let thirdDone = false;
  void pushes[2].then(() => (thirdDone = true));
  await new Promise((r) => setImmediate(r));
  assert.equal(thirdDone, false);
  const reader = queue[Symbol.asyncIterator]();
  assert.deepEqual(await reader.next(), { value: 1, done: false });
  assert.equal(await pushes[2], true);
  queue.end();
  const rest = [await reader.next(), await reader.next(), await reader.next()];
  assert.deepEqual(
    rest.map((r) => r.value ?? r.done),
    [2, 3, true],
  );
});

test('a failed queue yields what it holds, then throws', async () => {
  const queue = new AsyncQueue<number>(4);
  await queue.push(1);
  queue.fail(new Error('broker gone'));
  await assert.rejects(drain(queue), /broker gone/);
});

test('a failure after the end changes nothing: a slow reader still gets every item', async () => {
  const queue = new AsyncQueue<number>(4);
  await queue.push(1);
  queue.end();
  queue.fail(new Error('no record for 30000 ms'));
  assert.deepEqual(await drain(queue), [1]);
});

test('cancel releases a blocked writer and drops its item', async () => {
  const queue = new AsyncQueue<number>(1);
  await queue.push(1);
  const blocked = queue.push(2);
  queue.cancel();
  assert.equal(await blocked, false);
});

test('messages are split into requests under the byte cap, order kept', () => {
  const msg = (n: number) => ({ value: Buffer.alloc(n) });
  const chunks = chunkBySize([msg(500), msg(400), msg(300), msg(2000)], 1500);
  assert.deepEqual(
    chunks.map((c) => c.map((m) => (m.value as Buffer).length)),
    [[500, 400], [300], [2000]],
  );
});
