/**
 * The two links next to libonnxruntime.so.1 that make onnxruntime find the CUDA provider. Links, not
 * copies: the 272 MB provider stays in the cache, and after `npm ci` (which empties node_modules) a rerun
 * only puts the links back.
 */
import { lstat, readlink, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { GpuError } from './error.ts';

export type Entry =
  { readonly kind: 'missing' } | { readonly kind: 'link'; readonly target: string } | { readonly kind: 'file' };
export type LinkAction = 'create' | 'keep' | 'replace';

/**
 * What to do with the entry at a provider's place. A link elsewhere is an older starpo install (the
 * cache moved) and is replaced; a regular file is someone else's provider (onnxruntime-node's own CUDA
 * download, for CUDA 12) and is left alone, with an error saying so.
 */
export function linkPlan(entry: Entry, target: string, where: string): LinkAction {
  if (entry.kind === 'missing') return 'create';
  if (entry.kind === 'link') return entry.target === target ? 'keep' : 'replace';
  throw new GpuError(
    `${where} is a file starpo did not put there (onnxruntime-node's own CUDA install?); ` +
      'remove it, then run `starpo gpu install` again',
  );
}

export async function readEntry(path: string): Promise<Entry> {
  try {
    const st = await lstat(path);
    return st.isSymbolicLink() ? { kind: 'link', target: await readlink(path) } : { kind: 'file' };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'missing' };
    throw err;
  }
}

/** Links `native/<name>` to `lib/<name>` for each name; returns the action taken per name. */
export async function linkProviders(
  names: readonly string[],
  lib: string,
  native: string,
): Promise<Record<string, LinkAction>> {
  const done: Record<string, LinkAction> = {};
  for (const name of names) {
    const [where, target] = [join(native, name), join(lib, name)];
    const action = linkPlan(await readEntry(where), target, where);
    if (action === 'replace') await rm(where);
    if (action !== 'keep') await symlink(target, where);
    done[name] = action;
  }
  return done;
}
