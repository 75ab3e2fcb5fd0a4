import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeBytesAtomic, writeFileAtomic } from '../../../src/storage/atomic-file.ts';

test('an exclusive atomic write creates the file whole once, then refuses with EEXIST and leaves it as it was', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'starpo-atomic-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'config.json');
  await writeBytesAtomic(path, '{"a":1}\n', { exclusive: true });
  assert.equal(readFileSync(path, 'utf8'), '{"a":1}\n');
  await assert.rejects(writeBytesAtomic(path, '{"a":2}\n', { exclusive: true }), { code: 'EEXIST' });
  assert.equal(readFileSync(path, 'utf8'), '{"a":1}\n');
  await writeBytesAtomic(path, '{"a":3}\n'); // not exclusive: replaces
  assert.equal(readFileSync(path, 'utf8'), '{"a":3}\n');
  assert.deepEqual(readdirSync(dir), ['config.json'], 'no temporary file left');
});

test('a write that fails midway leaves neither the file nor its temporary one', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'starpo-atomic-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'config.json');
  for (const exclusive of [false, true]) {
    await assert.rejects(
      writeFileAtomic(
        path,
        async (fh) => {
          await fh.writeFile('{"half');
          throw new Error('disk full');
        },
        { exclusive },
      ),
      /disk full/,
    );
    assert.deepEqual(readdirSync(dir), []);
  }
});
