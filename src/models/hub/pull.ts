/**
 * `starpo models pull org/name[@revision]`: fetch what a model needs from the Hugging Face hub into the standard
 * cache (cache.ts), so Python tools share it. @huggingface/hub's snapshotDownload writes refs/ before the files
 * and fetches every file of the repository (.bin, onnx/, gguf…) without checking a byte, so a cut connection
 * would leave a snapshot that looks usable. Here only its API calls are used (modelInfo for the commit,
 * listFiles for sizes and hashes, downloadFile for the bytes) and the layout is written so that nothing
 * looks complete before it is: each blob goes to `<blob>.incomplete`, is checked against the listing's size
 * and hash, then renamed; config.json is linked last and refs/<revision> written after everything.
 */
import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readFile, rename, rm, stat, symlink } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { downloadFile, HubApiError, listFiles, modelInfo, type ListFileEntry } from '@huggingface/hub';
import { ConfigError, StarpoError } from '../../errors.ts';
import { writeBytesAtomic, writeFully } from '../../storage/atomic-file.ts';
import { INDEX_FILE, SINGLE_FILE, parseIndex } from '../../policy/io/sharded.ts';
import {
  COMMIT_HASH,
  DEFAULT_REVISION,
  findCachedSnapshot,
  hfHome,
  hubSpec,
  isFile,
  isHubId,
  isOffline,
  offlineError,
  repoFolder,
} from './cache.ts';

export const DEFAULT_HUB_URL = 'https://huggingface.co';

/** Beside the weights, what the engine reads (model-dir.ts) or transformers writes with a model. */
const MODEL_FILES = [
  'generation_config.json',
  'tokenizer.json',
  'tokenizer_config.json',
  'chat_template.jinja',
  'special_tokens_map.json',
];

export type PullProgress = (done: number, total: number, file: string) => void;

export interface PullOptions {
  /** `org/name`. */
  readonly repo: string;
  /** Branch, tag or commit; `main` by default. */
  readonly revision?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Overrides HF_ENDPOINT. */
  readonly hubUrl?: string;
  /** Bytes of the model's files done so far (those already cached included), of all of them. */
  readonly onProgress?: PullProgress;
}

export const hubEndpoint = (env: NodeJS.ProcessEnv, hubUrl?: string): string =>
  (hubUrl ?? (env.HF_ENDPOINT || DEFAULT_HUB_URL)).replace(/\/+$/, '');

/** As huggingface_hub: HF_TOKEN, the older HUGGING_FACE_HUB_TOKEN, else the file `hf auth login` writes. */
export async function hubToken(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const fromEnv = env.HF_TOKEN || env.HUGGING_FACE_HUB_TOKEN;
  if (fromEnv) return fromEnv.trim();
  const file = env.HF_TOKEN_PATH || join(hfHome(env), 'token');
  return (await readFile(file, 'utf8').catch(() => '')).trim() || undefined;
}

interface Pull {
  readonly repo: string;
  readonly spec: string;
  readonly hub: string;
  readonly accessToken: string | undefined;
  readonly folder: string;
}

/** Fetches repo@revision's model files into the cache (what is there already is kept) and returns the snapshot. */
export async function pullHubModel(o: PullOptions): Promise<string> {
  const env = o.env ?? process.env;
  const revision = o.revision ?? DEFAULT_REVISION;
  const spec = hubSpec(o.repo, revision);
  if (!isHubId(o.repo, revision)) throw new ConfigError('model', `${spec} is not a hub id org/name[@revision]`);
  if (isOffline(env)) {
    const cached = await findCachedSnapshot(o.repo, revision, env);
    if (cached !== null) return cached;
    throw offlineError(o.repo, revision, env);
  }
  const p: Pull = {
    repo: o.repo,
    spec,
    hub: hubEndpoint(env, o.hubUrl),
    accessToken: await hubToken(env),
    folder: repoFolder(o.repo, env),
  };
  try {
    return await pullInto(p, revision, o.onProgress);
  } catch (err) {
    throw hubError(err, p, revision);
  }
}

async function pullInto(p: Pull, revision: string, onProgress: PullProgress | undefined): Promise<string> {
  const auth = { hubUrl: p.hub, accessToken: p.accessToken };
  const { sha: commit } = await modelInfo({ ...auth, name: p.repo, revision, additionalFields: ['sha'] });
  if (typeof commit !== 'string' || !COMMIT_HASH.test(commit))
    throw new StarpoError(`${p.spec}: ${p.hub} gave no commit hash for revision ${revision}`, { retryable: true });
  const listed = new Map<string, ListFileEntry>();
  for await (const e of listFiles({ ...auth, repo: { type: 'model', name: p.repo }, revision: commit }))
    if (e.type === 'file') listed.set(e.path, e);
  const entry = (name: string): ListFileEntry => {
    const e = listed.get(name);
    if (!e) throw new ConfigError('model', `${p.spec} on ${p.hub} has no ${name} at commit ${commit}`);
    return e;
  };
  entry('config.json');
  if (!listed.has(INDEX_FILE) && !listed.has(SINGLE_FILE))
    throw new ConfigError(
      'model',
      `${p.spec} on ${p.hub} has no ${SINGLE_FILE} or ${INDEX_FILE} (starpo reads safetensors weights only)`,
    );
  const snapshot = join(p.folder, 'snapshots', commit);
  const total = { done: 0, all: 0 };
  const place = async (name: string): Promise<void> => {
    await placeFile(p, commit, entry(name), snapshot, (bytes) => onProgress?.(total.done + bytes, total.all, name));
    total.done += fileSize(entry(name));
    onProgress?.(total.done, total.all, name);
  };
  let weights = [SINGLE_FILE];
  if (listed.has(INDEX_FILE)) {
    // The index first, as it names the shards: only those, not every *.safetensors (Mistral's repos also hold a
    // consolidated.safetensors as large as the model).
    total.all = fileSize(entry(INDEX_FILE));
    await place(INDEX_FILE);
    const indexPath = join(snapshot, INDEX_FILE);
    weights = [...new Set(Object.values(parseIndex(await readFile(indexPath, 'utf8'), indexPath)))].sort();
  }
  // config.json last: a snapshot without it is "not there yet" to findCachedSnapshot, whatever else it holds.
  const rest = [...weights, ...MODEL_FILES.filter((f) => listed.has(f)), 'config.json'];
  total.all += rest.reduce((s, f) => s + fileSize(entry(f)), 0);
  for (const name of rest) await place(name);
  if (revision !== commit) {
    const ref = join(p.folder, 'refs', revision);
    await mkdir(dirname(ref), { recursive: true });
    await writeBytesAtomic(ref, commit);
  }
  return snapshot;
}

const fileSize = (e: ListFileEntry): number => e.lfs?.size ?? e.size;

/** Links snapshots/<commit>/<name> to its blob, downloading the blob unless the cache has it already. */
async function placeFile(
  p: Pull,
  commit: string,
  e: ListFileEntry,
  snapshot: string,
  progress: (bytes: number) => void,
): Promise<void> {
  const pointer = join(snapshot, e.path);
  if ((await stat(pointer).catch(() => null))?.size === fileSize(e)) return;
  // huggingface_hub names blobs by etag: the LFS sha256, else the git blob sha1; the cache is shared with it.
  const etag = e.lfs?.oid ?? e.oid;
  if (!etag || !/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(etag))
    throw new StarpoError(`${p.spec}: ${p.hub} listed ${e.path} without a usable hash`, { retryable: false });
  const blob = join(p.folder, 'blobs', etag);
  await mkdir(dirname(blob), { recursive: true });
  if (!(await isFile(blob))) await downloadBlob(p, commit, e, blob, progress);
  await mkdir(dirname(pointer), { recursive: true });
  await rm(pointer, { force: true });
  await symlink(relative(dirname(pointer), blob), pointer);
}

/**
 * Downloads into `<blob>.incomplete`, continuing a previous attempt with a Range request; renames only when size
 * and hash match the listing. A resumed file that does not match (a server that ignored the Range) is fetched
 * once more from its first byte.
 */
async function downloadBlob(
  p: Pull,
  commit: string,
  e: ListFileEntry,
  blob: string,
  progress: (bytes: number) => void,
): Promise<void> {
  const size = fileSize(e);
  const tmp = `${blob}.incomplete`;
  let from = (await stat(tmp).catch(() => null))?.size ?? 0;
  if (from > size) from = 0;
  for (;;) {
    const hash = e.lfs ? createHash('sha256') : createHash('sha1').update(`blob ${size}\0`);
    if (from > 0) for await (const chunk of createReadStream(tmp, { end: from - 1 })) hash.update(chunk as Buffer);
    const got = from + (await fetchTo(p, commit, e, tmp, from, hash, (n) => progress(from + n)));
    const digest = hash.digest('hex');
    if (got === size && digest === (e.lfs?.oid ?? e.oid)) break;
    await rm(tmp, { force: true });
    if (from === 0)
      throw new StarpoError(
        `${p.spec}: ${e.path} from ${p.hub} arrived with ${got} bytes, sha ${digest.slice(0, 12)}…; the listing ` +
          `says ${size} bytes, ${(e.lfs?.oid ?? e.oid ?? '').slice(0, 12)}… (nothing was kept; pull again)`,
        { retryable: true },
      );
    from = 0;
  }
  await rename(tmp, blob);
}

/** Appends the file's bytes from `from` on to `tmp`, fsynced; returns how many arrived. */
async function fetchTo(
  p: Pull,
  commit: string,
  e: ListFileEntry,
  tmp: string,
  from: number,
  hash: Hash,
  progress: (bytes: number) => void,
): Promise<number> {
  const remote = await downloadFile({
    hubUrl: p.hub,
    accessToken: p.accessToken,
    repo: { type: 'model', name: p.repo },
    path: e.path,
    revision: commit,
    // One plain HTTP stream per file (the hub redirects xet-stored files to its CDN), which Range can resume.
    xet: false,
  });
  if (!remote) throw new ConfigError('model', `${p.spec}: ${p.hub} lists ${e.path} but does not serve it`);
  const fh = await open(tmp, from > 0 ? 'a' : 'w');
  let got = 0;
  try {
    for await (const chunk of (from > 0 ? remote.slice(from) : remote).stream() as AsyncIterable<Uint8Array>) {
      hash.update(chunk);
      await writeFully(fh, chunk);
      got += chunk.length;
      progress(got);
    }
    await fh.sync();
  } catch (cause) {
    throw new StarpoError(
      `${p.spec}: the download of ${e.path} from ${p.hub} was interrupted (${reason(cause)}) after ` +
        `${from + got} of ${fileSize(e)} bytes; nothing complete was left, and pulling again resumes it`,
      { retryable: true, cause },
    );
  } finally {
    await fh.close();
  }
  return got;
}

/** The innermost useful words of an error (undici says "terminated" or "fetch failed" and puts why in `cause`). */
function reason(err: unknown): string {
  let e = err;
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  const code = (e as NodeJS.ErrnoException | null)?.code;
  const text = e instanceof Error ? e.message : String(e);
  return (code && !text.includes(code) ? `${code}: ${text}` : text).split('\n')[0];
}

/** Every failure as one line that says what to do; starpo's own errors pass through. */
function hubError(err: unknown, p: Pull, revision: string): Error {
  if (err instanceof StarpoError) return err;
  if (err instanceof HubApiError) {
    const status = err.statusCode;
    if (status === 401 || status === 403) {
      const what = p.accessToken
        ? status === 401
          ? 'HF_TOKEN was refused (invalid or expired?): set HF_TOKEN to a valid token'
          : `HF_TOKEN has no access to it: accept its terms on ${p.hub}/${p.repo} or set HF_TOKEN to a token that may`
        : 'set HF_TOKEN to a token that may read it';
      return new ConfigError('model', `${p.spec} is gated or private on ${p.hub} (or does not exist): ${what}`, {
        cause: err,
      });
    }
    if (status === 404) {
      const rev = revision === DEFAULT_REVISION ? '' : ` (no such model, or no revision ${revision} of it)`;
      return new ConfigError('model', `${p.spec} does not exist on ${p.hub}${rev}`, { cause: err });
    }
    return new StarpoError(`${p.spec}: ${p.hub} answered ${status} (${reason(err)})`, {
      retryable: status >= 500 || status === 429,
      cause: err,
    });
  }
  if (err instanceof TypeError && /must start with 'hf_'/.test(err.message))
    return new ConfigError('HF_TOKEN', 'does not start with hf_, as Hugging Face access tokens do', { cause: err });
  if (err instanceof TypeError && err.message === 'fetch failed')
    return new StarpoError(
      `${p.spec}: cannot reach ${p.hub} (${reason(err)}); HF_HUB_OFFLINE=1 uses the cache alone, HF_ENDPOINT ` +
        'sets another hub',
      { retryable: true, cause: err },
    );
  return err instanceof Error ? err : new StarpoError(String(err));
}
