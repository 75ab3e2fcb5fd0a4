/**
 * Model weights as Hugging Face lays them out in a directory: either one `model.safetensors`, or shards
 * `model-00001-of-00003.safetensors`, … listed by `model.safetensors.index.json`
 * ({"metadata": {"total_size": N}, "weight_map": {tensor name: shard file}}).
 */
import { access, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { CorruptDataError, StarpoError } from '../../errors.ts';
import { writeBytesAtomic } from '../../storage/atomic-file.ts';
import { digestBytes } from '../../storage/hash.ts';
import { DTYPE_BYTES, elementCount, type Tensor } from './dtype.ts';
import { SafetensorsReader, writeSafetensors, type NamedTensors } from './safetensors.ts';

export const SINGLE_FILE = 'model.safetensors';
export const INDEX_FILE = 'model.safetensors.index.json';

/** Loads every weight in `dir`, following the shard index when there is one. */
export async function readModelWeights(dir: string): Promise<Map<string, Tensor>> {
  const indexPath = join(dir, INDEX_FILE);
  if (!(await exists(indexPath))) {
    const reader = await SafetensorsReader.open(join(dir, SINGLE_FILE));
    try {
      return await reader.readAll();
    } finally {
      await reader.close();
    }
  }
  const weightMap = parseIndex(await readFile(indexPath, 'utf8'), indexPath);
  const byShard = new Map<string, string[]>();
  for (const [name, shard] of Object.entries(weightMap)) byShard.set(shard, [...(byShard.get(shard) ?? []), name]);
  const out = new Map<string, Tensor>();
  for (const [shard, names] of byShard) {
    const reader = await SafetensorsReader.open(join(dir, shard));
    try {
      for (const name of names) {
        if (!reader.has(name)) throw new CorruptDataError(`${INDEX_FILE} maps ${name} to ${shard}, which lacks it`);
        out.set(name, await reader.read(name));
      }
    } finally {
      await reader.close();
    }
  }
  return out;
}

/** Parses the index and returns its weight_map; shard names must be plain file names inside the directory. */
export function parseIndex(text: string, source = INDEX_FILE): Record<string, string> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (cause) {
    throw new CorruptDataError(`${source}: not valid JSON`, { cause });
  }
  const weightMap = (raw as { weight_map?: unknown } | null)?.weight_map;
  if (typeof weightMap !== 'object' || weightMap === null || Array.isArray(weightMap)) {
    throw new CorruptDataError(`${source}: weight_map is missing or not an object`);
  }
  for (const [name, shard] of Object.entries(weightMap)) {
    if (typeof shard !== 'string' || shard === '' || basename(shard) !== shard || shard === '..') {
      throw new CorruptDataError(`${source}: weight_map.${name} is not a shard file name`);
    }
  }
  return weightMap as Record<string, string>;
}

export interface WriteWeightsOptions {
  /** Largest shard payload in bytes before starting a new shard (HF's default is 5 GB). */
  readonly maxShardBytes?: number;
  /** `__metadata__` of every shard; HF's loader expects {format: 'pt'}, which is the default. */
  readonly metadata?: Readonly<Record<string, string>>;
}

/**
 * Writes weights the way `save_pretrained` does: one `model.safetensors` when they fit in a shard, otherwise
 * numbered shards plus the index (written last, so a directory with an index has all its shards).
 * Returns each file written, in the order written, with its SHA-256.
 */
export async function writeModelWeights(
  dir: string,
  tensors: NamedTensors,
  options: WriteWeightsOptions = {},
): Promise<Map<string, string>> {
  const maxShardBytes = options.maxShardBytes ?? 5e9;
  const metadata = options.metadata ?? { format: 'pt' };
  const shards: [string, Tensor][][] = [[]];
  let shardBytes = 0;
  let totalSize = 0;
  for (const [name, tensor] of tensors) {
    const bytes = elementCount(tensor.shape) * DTYPE_BYTES[tensor.dtype];
    if (shardBytes > 0 && shardBytes + bytes > maxShardBytes) {
      shards.push([]);
      shardBytes = 0;
    }
    shards[shards.length - 1].push([name, tensor]);
    shardBytes += bytes;
    totalSize += bytes;
  }
  if (shards.length === 1)
    return new Map([[SINGLE_FILE, (await writeSafetensors(join(dir, SINGLE_FILE), shards[0], metadata)).sha256]]);
  const files = shards.map((_, i) => `model-${pad5(i + 1)}-of-${pad5(shards.length)}.safetensors`);
  const weightMap: Record<string, string> = {};
  const written = new Map<string, string>();
  for (const [i, shard] of shards.entries()) {
    written.set(files[i], (await writeSafetensors(join(dir, files[i]), shard, metadata)).sha256);
    for (const [name] of shard) weightMap[name] = files[i];
  }
  const index = { metadata: { total_size: totalSize }, weight_map: sortedObject(weightMap) };
  const text = `${JSON.stringify(index, null, 2)}\n`;
  await writeBytesAtomic(join(dir, INDEX_FILE), text);
  return written.set(INDEX_FILE, digestBytes(new TextEncoder().encode(text)).sha256);
}

function pad5(n: number): string {
  if (n > 99999) throw new StarpoError('more than 99999 shards');
  return String(n).padStart(5, '0');
}

function sortedObject(obj: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(obj).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
