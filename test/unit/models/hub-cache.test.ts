/**
 * Reading the Hugging Face cache as huggingface_hub writes it: which specs are hub ids, where the cache is for
 * each environment, and which snapshots count as a usable model. The caches here are laid out by hand, blobs
 * and relative symlinks, as `hf download` leaves them; nothing here uses the network.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { findCachedSnapshot, hubCacheDir, parseHubId } from '../../../src/models/hub/cache.ts';
import { resolveHubModel } from '../../../src/models/hub/resolve.ts';

const COMMIT = 'c'.repeat(40);
const work = await mkdtemp(join(tmpdir(), 'starpo-hub-cache-'));
after(() => rm(work, { recursive: true, force: true }));

const SHARDS = ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'];
const INDEX = JSON.stringify({ weight_map: { a: SHARDS[0], b: SHARDS[1] } });

/** A fresh HF_HOME holding Qwen/X at COMMIT (refs/main), each file a symlink into blobs/ as huggingface_hub does. */
async function cached(files: Record<string, string>, home = join(work, Math.random().toString(36).slice(2))) {
  const repo = join(home, 'hub', 'models--Qwen--X');
  const snapshot = join(repo, 'snapshots', COMMIT);
  await mkdir(join(repo, 'blobs'), { recursive: true });
  await mkdir(join(repo, 'refs'));
  await mkdir(snapshot, { recursive: true });
  await writeFile(join(repo, 'refs', 'main'), COMMIT);
  for (const [name, text] of Object.entries(files)) {
    await writeFile(join(repo, 'blobs', `blob-${name}`), text);
    await symlink(join('..', '..', 'blobs', `blob-${name}`), join(snapshot, name));
  }
  return { env: { HF_HOME: home, HF_HUB_OFFLINE: '1' }, snapshot, repo };
}

test('hub ids are org/name with an optional @revision, and nothing else is one', () => {
  assert.deepEqual(parseHubId('Qwen/Qwen3-0.6B'), { repo: 'Qwen/Qwen3-0.6B', revision: 'main' });
  assert.deepEqual(parseHubId('HuggingFaceTB/SmolLM2-135M@v1.0'), {
    repo: 'HuggingFaceTB/SmolLM2-135M',
    revision: 'v1.0',
  });
  assert.deepEqual(parseHubId(`a/b@${COMMIT}`), { repo: 'a/b', revision: COMMIT });
  assert.deepEqual(parseHubId('a/b@refs/pr/1'), { repo: 'a/b', revision: 'refs/pr/1' });
  const not = [
    './x',
    '/abs/path',
    'a/b/c',
    'x.gguf',
    'org/model.gguf',
    'name',
    'a/b@',
    'a/b@../x',
    '-a/b',
    'a/.b',
    'a--b/c',
  ];
  for (const spec of not) assert.equal(parseHubId(spec), null, spec);
  assert.equal(parseHubId('test/unit'), null, 'an existing path is a path');
});

test('the cache is HF_HUB_CACHE, else HF_HOME/hub, else XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub', () => {
  assert.equal(hubCacheDir({ HF_HUB_CACHE: '/c', HF_HOME: '/h', XDG_CACHE_HOME: '/x' }), '/c');
  assert.equal(hubCacheDir({ HF_HOME: '/h', XDG_CACHE_HOME: '/x' }), '/h/hub');
  assert.equal(hubCacheDir({ XDG_CACHE_HOME: '/x' }), '/x/huggingface/hub');
  assert.equal(hubCacheDir({}), join(homedir(), '.cache', 'huggingface', 'hub'));
  assert.equal(hubCacheDir({ HF_HOME: '~/hf' }), join(homedir(), 'hf', 'hub'));
});

test('a complete snapshot is found through refs/main or by its commit', async () => {
  const { env, snapshot } = await cached({ 'config.json': '{}', 'model.safetensors': 'w' });
  assert.equal(await findCachedSnapshot('Qwen/X', 'main', env), snapshot);
  assert.equal(await findCachedSnapshot('Qwen/X', COMMIT, env), snapshot);
  assert.equal(await findCachedSnapshot('Qwen/X', 'v2', env), null);
  assert.equal(await findCachedSnapshot('Qwen/Y', 'main', env), null);
});

test('a cached model resolves in place, offline, and a sharded one needs every shard its index lists', async () => {
  const { env, snapshot } = await cached({
    'config.json': '{}',
    'model.safetensors.index.json': INDEX,
    [SHARDS[0]]: 'a',
    [SHARDS[1]]: 'b',
  });
  assert.equal(await resolveHubModel('Qwen/X', { env }), snapshot);
  assert.equal(await resolveHubModel('./Qwen/X', { env }), null);
});

test('a snapshot without config.json or without weights is not a model yet', async () => {
  const noConfig = await cached({ 'model.safetensors': 'w' });
  assert.equal(await findCachedSnapshot('Qwen/X', 'main', noConfig.env), null);
  const noWeights = await cached({ 'config.json': '{}', 'tokenizer.json': '{}' });
  assert.equal(await findCachedSnapshot('Qwen/X', 'main', noWeights.env), null);
});

test('a shard the index lists but the snapshot lacks is a one-line error naming it', async () => {
  const { env, snapshot } = await cached({
    'config.json': '{}',
    'model.safetensors.index.json': INDEX,
    [SHARDS[0]]: 'a',
  });
  const message =
    `config model: Qwen/X@main in ${snapshot} is missing ${SHARDS[1]} ` +
    '(an interrupted download? run starpo models pull Qwen/X)';
  await assert.rejects(findCachedSnapshot('Qwen/X', 'main', env), { message });
  await assert.rejects(resolveHubModel('Qwen/X', { env }), { message });
});

test('a shard whose symlink points at a deleted blob counts as missing', async () => {
  const { env, repo } = await cached({
    'config.json': '{}',
    'model.safetensors.index.json': INDEX,
    [SHARDS[0]]: 'a',
    [SHARDS[1]]: 'b',
  });
  await rm(join(repo, 'blobs', `blob-${SHARDS[0]}`));
  await assert.rejects(findCachedSnapshot('Qwen/X', 'main', env), /is missing model-00001-of-00002\.safetensors \(/);
});

test('without downloads allowed, a model the cache lacks is a one-line error saying to pull it', async () => {
  const env = { HF_HOME: join(work, 'empty') };
  const message =
    `config model: Qwen/X@v2 is not in the Hugging Face cache ${join(work, 'empty', 'hub')}: ` +
    'run starpo models pull Qwen/X@v2';
  await assert.rejects(resolveHubModel('Qwen/X@v2', { env, allowDownload: false }), { message });
});
