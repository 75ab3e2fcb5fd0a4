import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { extractEntry, listZip } from '../../../src/packages/zip.ts';
import { zipOf } from '../gpu/fixtures.ts';

test('zip members, deflated and stored, come out byte for byte', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'starpo-zip-'));
  const big = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 7919) % 251));
  writeFileSync(join(dir, 'w.whl'), zipOf({ 'a/lib.so': big, 'b/empty': '', 'c/x.txt': 'hello' }));
  const entries = await listZip(join(dir, 'w.whl'));
  assert.deepEqual(
    entries.map((e) => [e.name, e.method, e.size]),
    [
      ['a/lib.so', 8, 300_000],
      ['b/empty', 0, 0],
      ['c/x.txt', 8, 5],
    ],
  );
  for (const [e, want] of [
    [entries[0], big],
    [entries[1], Buffer.alloc(0)],
    [entries[2], Buffer.from('hello')],
  ] as const) {
    await extractEntry(join(dir, 'w.whl'), e, join(dir, 'out'));
    assert.deepEqual(readFileSync(join(dir, 'out')), want);
  }
});

test('a member whose size does not match the directory is refused and leaves no file behind', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'starpo-zip-'));
  writeFileSync(join(dir, 'w.whl'), zipOf({ 'a/lib.so': 'twelve bytes' }));
  const [entry] = await listZip(join(dir, 'w.whl'));
  await assert.rejects(
    extractEntry(join(dir, 'w.whl'), { ...entry, size: 99 }, join(dir, 'lib.so')),
    /unpacked to 12 bytes, expected 99/,
  );
  assert.equal(existsSync(join(dir, 'lib.so')) || existsSync(join(dir, 'lib.so.partial')), false);
});

test('a file that is not a zip archive is refused', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'starpo-zip-'));
  writeFileSync(join(dir, 'w.whl'), 'not a zip at all, just text');
  await assert.rejects(listZip(join(dir, 'w.whl')), /is not a zip file/);
});
