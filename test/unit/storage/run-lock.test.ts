import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireRunLock, LOCK_FILE, RunLockedError, staleness } from '../../../src/storage/run-lock.ts';

const runDir = () => realpathSync(mkdtempSync(join(tmpdir(), 'starpo-lock-')));
const deadPid = (): number => spawnSync(process.execPath, ['-e', '0']).pid!;
const holder = (dir: string, pid: number, host = hostname()) => ({
  pid,
  host,
  dir,
  command: 'starpo train',
  since: '2026-12-01T00:00:00.000Z',
});

test('a second writer is refused naming the holder; after release the next one gets the lock', async () => {
  const dir = runDir();
  const first = await acquireRunLock(dir, 'starpo train');
  await assert.rejects(
    acquireRunLock(dir, 'starpo sft'),
    (e: unknown) =>
      e instanceof RunLockedError &&
      e.message.startsWith(`run ${dir} is in use: starpo train (pid ${process.pid} on ${hostname()}, since `),
  );
  await first.release();
  assert.equal(existsSync(join(dir, LOCK_FILE)), false);
  await (await acquireRunLock(dir, 'starpo sft')).release();
});

test('a lock whose process is gone, or that was copied from another directory, is stale and taken over', async () => {
  const dir = runDir();
  for (const stale of [holder(dir, deadPid()), holder('/elsewhere/run', process.pid)]) {
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify(stale));
    const lock = await acquireRunLock(dir, 'starpo train --resume');
    assert.equal(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')).command, 'starpo train --resume');
    await lock.release();
  }
});

test('a live holder, or one on another host that cannot be checked from here, is not stale', () => {
  const pid = deadPid();
  assert.equal(staleness(holder('/r', process.pid), '/r'), null);
  assert.equal(staleness(holder('/r', pid, 'other-host'), '/r'), null);
  assert.equal(staleness(holder('/r', pid), '/r'), `pid ${pid} no longer runs`);
  assert.equal(staleness(holder('/a', process.pid), '/r'), 'it was written for /a (the run was copied)');
});

test('release leaves a lock that another process holds', async () => {
  const dir = runDir();
  const lock = await acquireRunLock(dir, 'starpo train');
  writeFileSync(join(dir, LOCK_FILE), JSON.stringify(holder(dir, process.pid)));
  await lock.release();
  assert.equal(existsSync(join(dir, LOCK_FILE)), true);
});
