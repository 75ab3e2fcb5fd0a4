/**
 * The Hugging Face cache, read exactly as huggingface_hub lays it out, so a model that Python (transformers,
 * `hf download`) already fetched is used in place, and what `starpo models pull` fetches is found by Python too:
 *   <cache>/models--{org}--{name}/refs/<revision>        the commit a branch or tag stood at when fetched
 *                                /snapshots/<commit>/…    the files, symlinks into blobs/
 *                                /blobs/<sha256 or git sha1>
 * A snapshot is only handed out as a model when it is complete, because a half-downloaded one would fail
 * much later, inside the engine, with a message about tensors rather than about the download.
 */
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../errors.ts';
import { INDEX_FILE, SINGLE_FILE, parseIndex } from '../../policy/io/sharded.ts';

export const DEFAULT_REVISION = 'main';
export const COMMIT_HASH = /^[0-9a-f]{40}$/;

const PART = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
/** Branch and tag names; slashes allowed (`refs/pr/1`, `release/v1`), `..` never (it would leave refs/). */
const REVISION = /^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)*$/;

export interface HubId {
  /** `org/name`. */
  readonly repo: string;
  readonly revision: string;
}

/**
 * `org/name` or `org/name@revision`; null for anything else, so `--model` can tell a hub id from a path, a
 * `.gguf` or a name. Strict on purpose: the id becomes a directory name and a URL path.
 */
export function parseHubId(spec: string): HubId | null {
  const at = spec.indexOf('@');
  const id =
    at < 0 ? { repo: spec, revision: DEFAULT_REVISION } : { repo: spec.slice(0, at), revision: spec.slice(at + 1) };
  return isHubId(id.repo, id.revision) && !existsSync(spec) ? id : null;
}

/** Whether repo and revision are safe to use as cache paths and URL parts (no `..`, no `--` inside a name). */
export function isHubId(repo: string, revision: string): boolean {
  const parts = repo.split('/');
  if (parts.length !== 2 || !parts.every((p) => PART.test(p) && !p.includes('--') && !p.includes('..'))) return false;
  return !/\.gguf$/i.test(repo) && REVISION.test(revision) && !revision.includes('..');
}

/** Python's os.path.expanduser for the one form env vars use. */
const expandUser = (p: string): string => (p === '~' || p.startsWith('~/') ? join(homedir(), p.slice(1)) : p);
const set = (v: string | undefined): string | undefined => (v === undefined || v === '' ? undefined : v);

/** huggingface_hub's constants.HF_HOME: $HF_HOME, else $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface. */
export function hfHome(env: NodeJS.ProcessEnv = process.env): string {
  const home = set(env.HF_HOME) ?? join(set(env.XDG_CACHE_HOME) ?? join(homedir(), '.cache'), 'huggingface');
  return expandUser(home);
}

/** huggingface_hub's constants.HF_HUB_CACHE: $HF_HUB_CACHE (or the older HUGGINGFACE_HUB_CACHE), else HF_HOME/hub. */
export function hubCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return expandUser(set(env.HF_HUB_CACHE) ?? set(env.HUGGINGFACE_HUB_CACHE) ?? join(hfHome(env), 'hub'));
}

/** `models--{org}--{name}`, huggingface_hub's repo_folder_name. */
export function repoFolder(repo: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(hubCacheDir(env), `models--${repo.split('/').join('--')}`);
}

/** huggingface_hub's constants.HF_HUB_OFFLINE: 1, ON, YES or TRUE. */
export const isOffline = (env: NodeJS.ProcessEnv): boolean =>
  ['1', 'ON', 'YES', 'TRUE'].includes((env.HF_HUB_OFFLINE ?? '').toUpperCase());

/** The one-line error for a model the cache lacks while the network is off limits. */
export function offlineError(repo: string, revision: string, env: NodeJS.ProcessEnv): ConfigError {
  return new ConfigError(
    'model',
    `${hubSpec(repo, revision)} is not in the Hugging Face cache ${hubCacheDir(env)} and offline mode is on ` +
      '(HF_HUB_OFFLINE=1): unset it to download the model, or pull it where the hub can be reached',
  );
}

/** What a user types to fetch this id again: the revision only when it is not the default. */
export const hubSpec = (repo: string, revision: string): string =>
  revision === DEFAULT_REVISION ? repo : `${repo}@${revision}`;

/** The commit a revision names in the cache: itself when it is a commit hash, else refs/<revision>'s content. */
export async function cachedCommit(
  repo: string,
  revision: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string | null> {
  if (COMMIT_HASH.test(revision)) return revision;
  const text = await readFile(join(repoFolder(repo, env), 'refs', revision), 'utf8').catch(() => null);
  const commit = text?.trim() ?? '';
  return COMMIT_HASH.test(commit) ? commit : null;
}

/**
 * The snapshot directory for repo@revision when it holds a whole model, null when it is absent or unfinished
 * (no refs, no config.json, no weights). A sharded snapshot whose index names a shard that is not there throws:
 * that is not "not downloaded yet" but a damaged cache, and the user should hear which file.
 */
export async function findCachedSnapshot(
  repo: string,
  revision: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string | null> {
  const commit = await cachedCommit(repo, revision, env);
  if (commit === null) return null;
  const dir = join(repoFolder(repo, env), 'snapshots', commit);
  if (!(await isFile(join(dir, 'config.json')))) return null;
  const missing = await missingWeights(dir);
  if (missing === null) return dir;
  if (missing.length === 0) return null;
  const spec = hubSpec(repo, revision);
  throw new ConfigError(
    'model',
    `${repo}@${revision} in ${dir} is missing ${missing.join(', ')} ` +
      `(an interrupted download? run starpo models pull ${spec})`,
  );
}

/**
 * null when the weights are all there; [] when there are none at all (nothing to blame); else the shards the
 * index lists that are absent. stat follows symlinks, so a link to a deleted blob counts as absent.
 */
async function missingWeights(dir: string): Promise<string[] | null> {
  if (await isFile(join(dir, SINGLE_FILE))) return null;
  const indexPath = join(dir, INDEX_FILE);
  if (!(await isFile(indexPath))) return [];
  const shards = [...new Set(Object.values(parseIndex(await readFile(indexPath, 'utf8'), indexPath)))].sort();
  const missing: string[] = [];
  for (const shard of shards) if (!(await isFile(join(dir, shard)))) missing.push(shard);
  return missing.length === 0 ? null : missing;
}

export async function isFile(path: string): Promise<boolean> {
  return (await stat(path).catch(() => null))?.isFile() ?? false;
}
