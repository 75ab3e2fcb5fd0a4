/**
 * What `--model` accepts, resolved to the one thing the engine reads — a Hugging Face model directory:
 *   - a directory (used in place);
 *   - a `.gguf` file (imported once into the cache, keyed by the file's sha256, so the same file always
 *     resolves to the same directory — a resumed run finds the weights it started from);
 *   - a named model that ships in a package (`smollm2-135m-instruct`, see named.ts);
 *   - a hub id `org/name[@revision]`, found in the Hugging Face cache or pulled into it (hub/).
 * Every route is deterministic for a given input, which is what lets a run's config keep the spec the user
 * typed rather than a machine-specific path.
 */
import { existsSync } from 'node:fs';
import { stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ConfigError } from '../errors.ts';
import { sha256File } from '../storage/hash.ts';
import { CACHE_DIR } from '../services/paths.ts';
import { importGguf } from './gguf/import.ts';
import { NAMED_MODELS, getNamedModel, isNamedModel } from './named.ts';

export interface ResolveOptions {
  readonly cacheDir?: string;
  readonly say?: (line: string) => void;
}

/** Where `--model file.gguf` is imported: one directory per GGUF content. */
export async function ggufImportDir(path: string, cacheDir = CACHE_DIR): Promise<string> {
  return join(cacheDir, 'models', 'gguf', (await sha256File(path)).slice(0, 24));
}

/**
 * The spec as a run's config keeps it: a path made absolute (runs start from other working directories),
 * a name or hub id as typed.
 */
export function modelSpec(spec: string): string {
  return existsSync(spec) ? resolve(spec) : spec;
}

export async function resolveModel(spec: string, o: ResolveOptions = {}): Promise<string> {
  const info = await stat(spec).catch(() => null);
  if (info?.isDirectory()) return resolve(spec);
  if (info?.isFile()) {
    if (!spec.toLowerCase().endsWith('.gguf'))
      throw new ConfigError('model', `${spec} is a file but not a .gguf (a model is a directory, a .gguf or a name)`);
    const dir = await ggufImportDir(spec, o.cacheDir);
    if (await isFile(join(dir, 'config.json'))) return dir;
    o.say?.(`importing ${spec} into ${dir}`);
    await importGguf(spec, dir);
    // For `models list` only: which file this content came from (the directory is named by its hash).
    await writeFile(join(dir, 'source.txt'), `${resolve(spec)}\n`).catch(() => undefined);
    return dir;
  }
  if (/\.gguf$/i.test(spec) || /^[./~]/.test(spec))
    throw new ConfigError('model', `${spec}: no such file or directory`);
  if (isNamedModel(spec)) return getNamedModel(spec, { cacheDir: o.cacheDir, say: o.say });
  // Loaded only for a hub id: the other routes never need the hub client.
  const { resolveHubModel } = await import('./hub/resolve.ts');
  let file = '';
  const hub = await resolveHubModel(spec, {
    onProgress: (_done, _total, name) => {
      if (name !== file) o.say?.(`pulling ${spec}: ${(file = name)}`);
    },
  });
  if (hub !== null) return hub;
  throw new ConfigError(
    'model',
    `${spec} is not a directory, a .gguf file, a named model (${Object.keys(NAMED_MODELS).join(', ')}) ` +
      'or a hub id org/name[@revision]',
  );
}

async function isFile(path: string): Promise<boolean> {
  return (await stat(path).catch(() => null))?.isFile() ?? false;
}
