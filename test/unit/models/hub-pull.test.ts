/**
 * Pulling from the hub, against a fake hub on 127.0.0.1 that serves what @huggingface/hub asks for (model info
 * for the commit, the tree listing, `/{repo}/resolve/{rev}/{file}` with the Range probe, etag, x-linked-etag,
 * x-repo-commit and content-length headers) and records every request. No test touches the internet.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { findCachedSnapshot } from '../../../src/models/hub/cache.ts';
import { pullHubModel } from '../../../src/models/hub/pull.ts';
import { resolveHubModel } from '../../../src/models/hub/resolve.ts';

const MAIN = 'a'.repeat(40);
const V1 = 'b'.repeat(40);
const config = (layers: number): Buffer => Buffer.from(JSON.stringify({ model_type: 'llama', layers }));
/** What each commit holds: a model's files and some it does not need. */
const COMMITS: Record<string, Record<string, Buffer>> = {
  [MAIN]: {
    'config.json': config(2),
    'tokenizer.json': Buffer.from('{"model":{}}'),
    'model.safetensors': randomBytes(300_000),
    'pytorch_model.bin': randomBytes(1000),
    'README.md': Buffer.from('# tiny'),
  },
  [V1]: {
    'config.json': config(1),
    'model.safetensors.index.json': Buffer.from(
      JSON.stringify({ weight_map: { a: 'model-00001-of-00002.safetensors', b: 'model-00002-of-00002.safetensors' } }),
    ),
    'model-00001-of-00002.safetensors': randomBytes(5000),
    'model-00002-of-00002.safetensors': randomBytes(5000),
    'consolidated.safetensors': randomBytes(10_000),
  },
};
const REVS: Record<string, string> = { main: MAIN, v1: V1, [MAIN]: MAIN, [V1]: V1 };
const isLfs = (path: string): boolean => /\.(safetensors|bin)$/.test(path);
const gitOid = (b: Buffer): string => createHash('sha1').update(`blob ${b.length}\0`).update(b).digest('hex');
const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

const hub = {
  requests: [] as { url: string; auth?: string; range?: string }[],
  /** Answer every request with this status. */
  status: 0,
  /** Send half of this file's body, then drop the connection (once). */
  cut: '',
  /** Serve this file with its first byte changed. */
  corrupt: '',
};

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function serve(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url!, 'http://x');
  hub.requests.push({ url: url.pathname, auth: req.headers.authorization, range: req.headers.range });
  if (hub.status) return json(res, hub.status, { error: 'Invalid credentials in Authorization header' });
  const m =
    /^\/api\/models\/org\/tiny\/(revision|tree)\/([^/]+)$/.exec(url.pathname) ??
    /^\/org\/tiny\/(resolve)\/([^/]+)\/(.+)$/.exec(url.pathname);
  const commit = m ? REVS[decodeURIComponent(m[2])] : undefined;
  if (!m || !commit) return json(res, 404, { error: 'Repository not found' });
  const files = COMMITS[commit];
  if (m[1] === 'revision') return json(res, 200, { _id: '1', id: 'org/tiny', sha: commit, lastModified: '2025' });
  if (m[1] === 'tree') {
    const tree = Object.entries(files).map(([path, b]) => ({
      type: 'file',
      path,
      size: b.length,
      oid: gitOid(b),
      ...(isLfs(path) && { lfs: { oid: sha256(b), size: b.length, pointerSize: 130 } }),
    }));
    return json(res, 200, [...tree, { type: 'directory', path: 'onnx', size: 0, oid: gitOid(Buffer.from('')) }]);
  }
  const body = files[m[3]];
  if (!body) return void res.writeHead(404, { 'x-error-code': 'EntryNotFound' }).end();
  const [, a, b] = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '') ?? [];
  const start = a ? Number(a) : 0;
  const end = b ? Number(b) + 1 : body.length;
  res.writeHead(a ? 206 : 200, {
    'x-repo-commit': commit,
    etag: `"${gitOid(body)}"`,
    ...(isLfs(m[3]) && { 'x-linked-etag': `"${sha256(body)}"`, 'x-linked-size': body.length }),
    ...(a && { 'content-range': `bytes ${start}-${end - 1}/${body.length}` }),
    'content-length': end - start,
  });
  if (hub.cut === m[3] && end - start > 1) {
    hub.cut = '';
    res.write(body.subarray(start, start + (end - start) / 2), () => res.destroy());
    return;
  }
  const bytes = Buffer.from(body.subarray(start, end));
  if (hub.corrupt === m[3]) bytes[0] ^= 1;
  res.end(bytes);
}

const server = createServer(serve);
await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
const HUB = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const homes: string[] = [];
after(async () => {
  server.close();
  await Promise.all(homes.map((h) => rm(h, { recursive: true, force: true })));
});

/** A fresh HF_HOME pointed at the fake hub, with its request log and failure modes reset. */
async function freshEnv(extra: NodeJS.ProcessEnv = {}): Promise<NodeJS.ProcessEnv> {
  const home = await mkdtemp(join(tmpdir(), 'starpo-hub-pull-'));
  homes.push(home);
  Object.assign(hub, { requests: [], status: 0, cut: '', corrupt: '' });
  return { HF_HOME: home, HF_ENDPOINT: HUB, ...extra };
}

const repoDir = (env: NodeJS.ProcessEnv): string => join(env.HF_HOME!, 'hub', 'models--org--tiny');

const oneLine = (pattern: RegExp) => (err: Error) => {
  assert.match(err.message, pattern);
  assert.ok(!err.message.includes('\n'), err.message);
  return true;
};

test('a pull writes the standard layout with only the model files, and the model then resolves from the cache', async () => {
  const env = await freshEnv();
  const dir = await pullHubModel({ repo: 'org/tiny', env });
  assert.equal(dir, join(repoDir(env), 'snapshots', MAIN));
  assert.deepEqual(readdirSync(dir).sort(), ['config.json', 'model.safetensors', 'tokenizer.json']);
  assert.equal(readFileSync(join(repoDir(env), 'refs', 'main'), 'utf8'), MAIN);
  assert.equal(
    readlinkSync(join(dir, 'model.safetensors')),
    join('..', '..', 'blobs', sha256(COMMITS[MAIN]['model.safetensors'])),
  );
  assert.deepEqual(readFileSync(join(dir, 'config.json')), COMMITS[MAIN]['config.json']);
  hub.requests = [];
  assert.equal(await resolveHubModel('org/tiny', { env }), dir);
  assert.deepEqual(hub.requests, []);
});

test('a model already in the cache is used in place without a single request', async () => {
  const env = await freshEnv();
  const dir = await pullHubModel({ repo: 'org/tiny', env });
  hub.requests = [];
  hub.status = 500;
  assert.equal(await resolveHubModel('org/tiny', { env }), dir);
  assert.equal(await resolveHubModel(`org/tiny@${MAIN}`, { env }), dir);
  assert.deepEqual(hub.requests, []);
});

test('@revision pulls that revision, and a sharded model brings only the shards its index lists', async () => {
  const env = await freshEnv();
  const dir = await resolveHubModel('org/tiny@v1', { env });
  assert.equal(dir, join(repoDir(env), 'snapshots', V1));
  const files = ['config.json', 'model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'];
  assert.deepEqual(readdirSync(dir!).sort(), [...files, 'model.safetensors.index.json']);
  assert.equal(readFileSync(join(repoDir(env), 'refs', 'v1'), 'utf8'), V1);
  assert.ok(!existsSync(join(repoDir(env), 'refs', 'main')));
});

test('a pull by commit hash writes no ref', async () => {
  const env = await freshEnv();
  assert.equal(await pullHubModel({ repo: 'org/tiny', revision: V1, env }), join(repoDir(env), 'snapshots', V1));
  assert.ok(!existsSync(join(repoDir(env), 'refs')));
});

test('HF_TOKEN goes to every request as a bearer token', async () => {
  const env = await freshEnv({ HF_TOKEN: 'hf_secret' });
  await pullHubModel({ repo: 'org/tiny', env });
  assert.ok(hub.requests.length >= 4);
  for (const r of hub.requests) assert.equal(r.auth, 'Bearer hf_secret', r.url);
});

test('HUGGING_FACE_HUB_TOKEN is the fallback for HF_TOKEN', async () => {
  const env = await freshEnv({ HUGGING_FACE_HUB_TOKEN: 'hf_older' });
  await pullHubModel({ repo: 'org/tiny', env });
  assert.equal(hub.requests[0].auth, 'Bearer hf_older');
});

test('a 401 is a one-line error saying the model is gated or private and to set HF_TOKEN', async () => {
  const env = await freshEnv();
  hub.status = 401;
  await assert.rejects(pullHubModel({ repo: 'org/tiny', env }), oneLine(/org\/tiny is gated or private.*set HF_TOKEN/));
  assert.equal(await findCachedSnapshot('org/tiny', 'main', env), null);
});

test('a 404 is a one-line error saying the model does not exist on the hub', async () => {
  const env = await freshEnv();
  await assert.rejects(
    pullHubModel({ repo: 'org/nope', env }),
    oneLine(new RegExp(`org/nope does not exist on ${HUB}$`)),
  );
  await assert.rejects(
    resolveHubModel('org/tiny@v9', { env }),
    oneLine(/org\/tiny@v9 does not exist on .*no revision v9/),
  );
});

test('a connection cut mid-file fails, leaves nothing that looks complete, and the next pull resumes it', async () => {
  const env = await freshEnv();
  hub.cut = 'model.safetensors';
  await assert.rejects(
    pullHubModel({ repo: 'org/tiny', env }),
    oneLine(/model\.safetensors .*was interrupted.*nothing complete/),
  );
  assert.equal(await findCachedSnapshot('org/tiny', 'main', env), null);
  assert.equal(await findCachedSnapshot('org/tiny', MAIN, env), null);
  assert.ok(!existsSync(join(repoDir(env), 'refs', 'main')));
  hub.requests = [];
  const dir = await pullHubModel({ repo: 'org/tiny', env });
  assert.equal(await findCachedSnapshot('org/tiny', 'main', env), dir);
  assert.deepEqual(readFileSync(join(dir, 'model.safetensors')), COMMITS[MAIN]['model.safetensors']);
  assert.ok(
    hub.requests.some((r) => /^bytes=[1-9]\d*-299999$/.test(r.range ?? '')),
    'resumed with a Range request',
  );
});

test('HF_HUB_OFFLINE=1 makes no request and says the model is not in the cache and offline mode is on', async () => {
  const env = await freshEnv({ HF_HUB_OFFLINE: '1' });
  const message = new RegExp(
    `org/tiny is not in the Hugging Face cache ${join(env.HF_HOME!, 'hub')} and offline mode is on`,
  );
  await assert.rejects(resolveHubModel('org/tiny', { env }), oneLine(message));
  await assert.rejects(pullHubModel({ repo: 'org/tiny', env }), oneLine(message));
  assert.deepEqual(hub.requests, []);
});

test('progress counts the bytes of every model file up to their total', async () => {
  const env = await freshEnv();
  const seen: [number, number, string][] = [];
  await pullHubModel({ repo: 'org/tiny', env, onProgress: (d, t, f) => seen.push([d, t, f]) });
  const total = ['config.json', 'tokenizer.json', 'model.safetensors'].reduce((s, f) => s + COMMITS[MAIN][f].length, 0);
  assert.deepEqual(seen.at(-1), [total, total, 'config.json']);
  assert.ok(seen.every(([d, t], i) => t === total && d >= (seen[i - 1]?.[0] ?? 0)));
});

test('a file whose bytes do not match the listing hash is refused and leaves no blob behind', async () => {
  const env = await freshEnv();
  hub.corrupt = 'model.safetensors';
  await assert.rejects(
    pullHubModel({ repo: 'org/tiny', env }),
    oneLine(/model\.safetensors .*300000 bytes.*nothing was kept/),
  );
  assert.deepEqual(readdirSync(join(repoDir(env), 'blobs')), []);
  assert.equal(await findCachedSnapshot('org/tiny', MAIN, env), null);
});

test('a hub that cannot be reached is a one-line error that mentions offline mode', async () => {
  const closed = createServer();
  await new Promise<void>((ok) => closed.listen(0, '127.0.0.1', ok));
  const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
  await new Promise((ok) => closed.close(ok));
  const env = await freshEnv({ HF_ENDPOINT: url });
  await assert.rejects(
    pullHubModel({ repo: 'org/tiny', env }),
    oneLine(/cannot reach .*ECONNREFUSED.*HF_HUB_OFFLINE=1/),
  );
});
