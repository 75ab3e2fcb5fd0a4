/**
 * `starpo models list`: every model the caches hold, whichever route put it there (a packaged model, an
 * imported GGUF, a hub snapshot), with its size on disk, so a user sees what `--model` will find without
 * downloading and what is worth deleting.
 */
import { lstat, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { CACHE_DIR } from '../services/paths.ts';
import { hubCacheDir } from './hub/cache.ts';
import { NAMED_MODELS, type NamedModelName, namedModelPaths } from './named.ts';

export interface CachedModel {
  readonly kind: 'named' | 'gguf' | 'hub';
  /** What `--model` takes to use it (a name, a hub id@revision, or the directory). */
  readonly name: string;
  readonly dir: string;
  readonly bytes: number;
}

/** Bytes of the files under `dir`, following symlinks once (hub snapshots link into blobs/). */
async function sizeOf(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += await sizeOf(path);
    else total += (await stat(path).catch(() => lstat(path))).size;
  }
  return total;
}

async function subdirs(dir: string): Promise<string[]> {
  return (await readdir(dir, { withFileTypes: true }).catch(() => []))
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
}

export async function listCachedModels(cacheDir = CACHE_DIR, env = process.env): Promise<CachedModel[]> {
  const out: CachedModel[] = [];
  for (const name of Object.keys(NAMED_MODELS) as NamedModelName[]) {
    const { dir } = namedModelPaths(name, cacheDir);
    if (await stat(join(dir, 'config.json')).catch(() => null))
      out.push({ kind: 'named', name, dir, bytes: await sizeOf(dir) });
  }
  const ggufRoot = join(cacheDir, 'models', 'gguf');
  for (const id of await subdirs(ggufRoot)) {
    const dir = join(ggufRoot, id);
    const source = await readFile(join(dir, 'source.txt'), 'utf8').catch(() => id);
    out.push({ kind: 'gguf', name: source.trim(), dir, bytes: await sizeOf(dir) });
  }
  const hub = hubCacheDir(env);
  for (const repoDir of (await subdirs(hub)).filter((d) => d.startsWith('models--'))) {
    const repo = repoDir.slice('models--'.length).replace('--', '/');
    for (const commit of await subdirs(join(hub, repoDir, 'snapshots'))) {
      const dir = join(hub, repoDir, 'snapshots', commit);
      out.push({ kind: 'hub', name: `${repo}@${commit.slice(0, 12)}`, dir, bytes: await sizeOf(dir) });
    }
  }
  return out;
}
