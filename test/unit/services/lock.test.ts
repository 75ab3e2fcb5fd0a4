import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, realpathSync, writeFileSync, existsSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { SERVICES_LOCK, withServicesLock } from '../../../src/services/lock.ts';
import { takeLock, type RunLock } from '../../../src/storage/run-lock.ts';

const scratch = (): string => realpathSync(mkdtempSync(join(tmpdir(), 'starpo-services-lock-')));

test('a second services command waits for the first, says once whom for, then runs', async () => {
  const dir = scratch();
  const first = (await takeLock(join(dir, SERVICES_LOCK), dir, 'starpo services start')) as RunLock;
  assert.ok('release' in first);
  const said: string[] = [];
  const order: string[] = [];
  setTimeout(() => {
    order.push('first done');
    void first.release();
  }, 300);
  const out = await withServicesLock(
    'starpo services stop',
    (l) => said.push(l),
    async () => {
      order.push('second runs');
      return 7;
    },
    { dir, pollMs: 50 },
  );
  assert.equal(out, 7);
  assert.deepEqual(order, ['first done', 'second runs']);
  assert.equal(said.length, 1);
  assert.match(said[0]!, new RegExp(`^waiting for starpo services start \\(pid ${process.pid}, since `));
  assert.ok(!existsSync(join(dir, SERVICES_LOCK)), 'released after the second command');
});

test('a holder that never finishes is a one-line error naming it and the file; a dead one is taken over', async () => {
  const dir = scratch();
  const held = await takeLock(join(dir, SERVICES_LOCK), dir, 'starpo services start');
  assert.ok('release' in held);
  let ran = false;
  await assert.rejects(
    withServicesLock(
      'starpo services start',
      () => {},
      async () => void (ran = true),
      { dir, timeoutMs: 150, pollMs: 50 },
    ),
    /^ServiceError: services: starpo services start \(pid \d+\) still holds .*services\.lock after 0\.15s; wait for it/,
  );
  assert.equal(ran, false);
  await held.release();

  const dead = { pid: 2 ** 22 + 12345, host: hostname(), dir, command: 'starpo services start', since: 'then' };
  writeFileSync(join(dir, SERVICES_LOCK), `${JSON.stringify(dead)}\n`);
  assert.equal(
    await withServicesLock(
      'starpo services stop',
      () => {},
      async () => 'ran',
      { dir, timeoutMs: 0 },
    ),
    'ran',
  );
});
