/**
 * `--model` as users give it, beyond the packaged model: a .gguf file imported once into the cache by its content
 * (the same bytes elsewhere resolve to the same directory, so a resumed run finds its weights), and what
 * `models list` and `doctor` then show of the caches.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { exportModelGguf } from '../../../src/models/gguf/export.ts';
import { listCachedModels } from '../../../src/models/list.ts';
import { resolveModel } from '../../../src/models/resolve.ts';
import { openModelDirectory } from '../../../src/policy/io/model-dir.ts';
import { withTokenizer } from './gguf-helpers.ts';

const BIN = fileURLToPath(new URL('../../../bin/starpo.js', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'starpo-model-routes-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
const cacheDir = join(scratch, 'cache');
const hubDir = join(scratch, 'hub');

async function tinyGguf(): Promise<string> {
  const gguf = join(scratch, 'qwen2-tiny.gguf');
  await exportModelGguf(withTokenizer(scratch, 'qwen2-tiny'), gguf);
  return gguf;
}

function starpo(...args: string[]) {
  const env = { ...process.env, STARPO_CACHE_DIR: cacheDir, HF_HUB_CACHE: hubDir, HF_HUB_OFFLINE: '1' };
  return spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env, timeout: 110_000 });
}

test('a .gguf model is imported once, keyed by its content, and listed with its source and size', async () => {
  const gguf = await tinyGguf();
  const said: string[] = [];
  const dir = await resolveModel(gguf, { cacheDir, say: (l) => said.push(l) });
  assert.match(dir, new RegExp(`^${cacheDir}/models/gguf/[0-9a-f]{24}$`));
  assert.equal(said.length, 1);
  assert.equal((await openModelDirectory(dir)).config.modelType, 'qwen2');

  const copy = join(scratch, 'elsewhere.gguf');
  copyFileSync(gguf, copy);
  assert.equal(await resolveModel(copy, { cacheDir, say: (l) => said.push(l) }), dir, 'same bytes, same directory');
  assert.equal(said.length, 1, 'the second resolve imports nothing');

  mkdirSync(join(hubDir, 'models--org--name', 'snapshots', 'abcdef0123456789'), { recursive: true });
  writeFileSync(join(hubDir, 'models--org--name', 'snapshots', 'abcdef0123456789', 'config.json'), '{}');
  const listed = await listCachedModels(cacheDir, { HF_HUB_CACHE: hubDir });
  assert.deepEqual(
    listed.map((m) => [m.kind, m.name, m.dir]),
    [
      ['gguf', gguf, dir],
      ['hub', 'org/name@abcdef012345', join(hubDir, 'models--org--name', 'snapshots', 'abcdef0123456789')],
    ],
  );
  assert.ok(listed[0]!.bytes > 10_000 && listed[1]!.bytes === 2);
});

test('models list and doctor show the caches a --model spec resolves in', { timeout: 240_000 }, async () => {
  const listed = starpo('models', 'list');
  assert.equal(listed.status, 0, listed.stderr);
  assert.match(listed.stdout, /^gguf +\S*qwen2-tiny\.gguf +0\.\d\d GB +\S+models\/gguf\/[0-9a-f]{24}$/m);
  assert.match(listed.stdout, /^hub +org\/name@abcdef012345 +0\.00 GB/m);
  const doctor = starpo('doctor', '--json');
  const rows = doctor.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { name: string; detail: string });
  const detail = (name: string) => rows.find((r) => r.name === name)?.detail;
  assert.equal(detail('model cache'), `${join(cacheDir, 'models')} (0 packaged, 1 imported GGUF)`);
  assert.equal(detail('hub cache'), `${hubDir} (1 snapshots)`);
});
