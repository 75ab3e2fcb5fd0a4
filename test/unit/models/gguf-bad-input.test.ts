/**
 * Damaged and unsupported GGUF files are refused in one line before anything is written: each case is the
 * real SmolLM2 GGUF cut short or patched in place (a different architecture, a quantisation type starpo
 * does not read), imported into a directory that must not exist afterwards.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { copyFile, mkdtemp, open, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { importGguf } from '../../../src/models/gguf/import.ts';
import { getNamedModel, namedModelPaths } from '../../../src/models/named.ts';
import { resolveModel } from '../../../src/models/resolve.ts';

await getNamedModel('smollm2-135m-instruct');
const REAL = namedModelPaths('smollm2-135m-instruct').gguf;
const HEADER = readFileSync(REAL).subarray(0, 4 << 20);
const work = await mkdtemp(join(tmpdir(), 'starpo-gguf-bad-'));
after(() => rm(work, { recursive: true, force: true }));

/** A copy of the real file with `bytes` written at `at`. */
async function patched(name: string, at: number, bytes: Uint8Array): Promise<string> {
  const path = join(work, name);
  await copyFile(REAL, path);
  const fh = await open(path, 'r+');
  await fh.write(bytes, 0, bytes.length, at);
  await fh.close();
  return path;
}

/** Imports `path` and expects a one-line error matching `pattern`, with nothing left at the destination. */
async function refused(path: string, pattern: RegExp): Promise<void> {
  const out = join(work, `out-${Math.random().toString(36).slice(2)}`);
  await assert.rejects(importGguf(path, out), (err: Error) => {
    assert.match(err.message, pattern);
    assert.ok(!err.message.includes('\n'), `one line: ${err.message}`);
    return true;
  });
  assert.ok(!existsSync(out), 'nothing written');
}

test('a GGUF cut short inside its tensor data is refused as truncated', async () => {
  const path = join(work, 'cut.gguf');
  await copyFile(REAL, path);
  await truncate(path, 50_000_000);
  await refused(
    path,
    /tensor blk\.\d+\.\S+ ends at byte \d+, past the end of the file \(50000000 bytes\): truncated\?/,
  );
});

test('a GGUF cut short inside its header is refused as truncated', async () => {
  const path = join(work, 'header.gguf');
  await writeFile(path, HEADER.subarray(0, 4096));
  await refused(path, /truncated GGUF header/);
});

test('a file that is not GGUF is refused', async () => {
  const path = join(work, 'text.gguf');
  await writeFile(path, 'this is not a model\n'.repeat(10));
  await refused(path, /not a GGUF file \(no GGUF magic\)/);
});

test('an architecture starpo does not run is named in the error', async () => {
  const at = HEADER.indexOf(Buffer.from('general.architecture')) + 'general.architecture'.length + 4 + 8;
  assert.equal(HEADER.subarray(at, at + 5).toString(), 'llama');
  await refused(await patched('gemma.gguf', at, Buffer.from('gemma')), /architecture "gemma" is not supported/);
});

test('a quantisation type starpo cannot dequantise is named in the error', async () => {
  const name = Buffer.from('token_embd.weight');
  const at = HEADER.indexOf(name) + name.length + 4 + 2 * 8; // n_dims, two dims, then the type
  await refused(
    await patched('iq2.gguf', at, new Uint8Array([16, 0, 0, 0])),
    /token_embd\.weight is quantised as IQ2_XXS, which starpo cannot dequantise/,
  );
});

test('a missing GGUF path is one line, and --model says the same', async () => {
  await refused(join(work, 'nope.gguf'), /nope\.gguf: no such file/);
  await assert.rejects(resolveModel(join(work, 'nope.gguf')), /nope\.gguf: no such file or directory/);
});
