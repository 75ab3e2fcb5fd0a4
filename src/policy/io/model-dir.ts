/**
 * A Hugging Face model directory, as `save_pretrained` writes it and the Hub serves it: config.json,
 * safetensors weights (one file or shards + index; F32, F16 or BF16, widened to F32 on load), tokenizer.json
 * with tokenizer_config.json (special tokens, usually the Jinja chat template), optionally chat_template.jinja
 * (transformers ≥ 4.43 writes the template there) and generation_config.json (the ids that end a turn).
 * Opening checks everything but the weight values — every expected tensor present with its shape, nothing
 * unexplained beside them — so a wrong directory fails before a run writes anything.
 */
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ConfigError } from '../../errors.ts';
import { sha256File } from '../../storage/hash.ts';
import { hfParameterNames, type ModelConfig, parseModelConfig } from './config.ts';
import type { Tensor } from './dtype.ts';
import { SafetensorsReader } from './safetensors.ts';
import { INDEX_FILE, SINGLE_FILE, parseIndex, readModelWeights } from './sharded.ts';

export const GENERATION_CONFIG_FILE = 'generation_config.json';
export const CHAT_TEMPLATE_FILE = 'chat_template.jinja';
/** Files carried beside the weights into checkpoints and exports (those present). */
export const MODEL_ASSET_FILES = [
  'tokenizer.json',
  'tokenizer_config.json',
  CHAT_TEMPLATE_FILE,
  GENERATION_CONFIG_FILE,
] as const;

/** Tensors old checkpoints store that are recomputed, not learnt (rotary tables). */
const IGNORED_TENSOR = /\.rotary_emb\.inv_freq$/;

export interface ModelDirectory {
  /** Absolute path. */
  readonly dir: string;
  readonly config: ModelConfig;
  /** Contents of the asset files present (tokenizer, template, generation config), by file name. */
  readonly assets: Readonly<Record<string, string>>;
  /** Ids that end generation: generation_config.json's eos_token_id, else config.json's. */
  readonly eosTokenIds: readonly number[];
  /** The weight files (shards and index, or the single file), for fingerprinting. */
  readonly weightFiles: readonly string[];
  /** Every weight under its HF name, F32 in memory. */
  readWeights(): Promise<Map<string, Tensor>>;
}

/** Opens and checks a model directory; every problem is a ConfigError naming the file or tensor. */
export async function openModelDirectory(path: string): Promise<ModelDirectory> {
  const dir = resolve(path);
  const info = await stat(dir).catch(() => null);
  if (!info?.isDirectory()) throw new ConfigError('model', `${path} is not a directory`);
  const configText = await readFile(join(dir, 'config.json'), 'utf8').catch(() => {
    throw new ConfigError('model', `${path} has no config.json (not a Hugging Face model directory)`);
  });
  const config = parseModelConfig(configText);
  const weightFiles = await checkWeights(dir, config);
  const assets: Record<string, string> = {};
  for (const name of MODEL_ASSET_FILES) {
    const text = await readFile(join(dir, name), 'utf8').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return null;
      throw err;
    });
    if (text !== null) assets[name] = text;
  }
  const eosTokenIds = generationEosIds(assets[GENERATION_CONFIG_FILE]) ?? config.eosTokenIds;
  return { dir, config, assets, eosTokenIds, weightFiles, readWeights: () => readModelWeights(dir) };
}

/** sha256 over the weight files' own hashes, in name order: one stable id for "these weights". */
export async function weightsFingerprint(m: ModelDirectory): Promise<string> {
  const h = createHash('sha256');
  for (const name of [...m.weightFiles].sort()) h.update(`${name}:${await sha256File(join(m.dir, name))}\n`);
  return h.digest('hex');
}

/** generation_config.json's eos_token_id as a list; null when the file or the field is absent. */
export function generationEosIds(text: string | undefined): number[] | null {
  if (text === undefined) return null;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (cause) {
    throw new ConfigError(GENERATION_CONFIG_FILE, 'is not valid JSON', { cause });
  }
  const v = (raw as { eos_token_id?: unknown } | null)?.eos_token_id;
  if (v == null) return null;
  const ids = Array.isArray(v) ? v : [v];
  if (!ids.every((id) => Number.isSafeInteger(id) && id >= 0))
    throw new ConfigError(`${GENERATION_CONFIG_FILE} eos_token_id`, `${JSON.stringify(v)} is not a token id`);
  return ids as number[];
}

/** Compares the stored tensor table (headers only) with the config's; returns the weight files. */
async function checkWeights(dir: string, config: ModelConfig): Promise<string[]> {
  const tables = await tensorTables(dir);
  const found = new Map<string, { shape: readonly number[]; file: string }>();
  for (const [file, tensors] of tables) for (const [name, shape] of tensors) found.set(name, { shape, file });
  for (const p of hfParameterNames(config)) {
    const t = found.get(p.name);
    if (!t) throw new ConfigError(p.name, `is missing from the weights in ${dir}`);
    if (t.shape.length !== p.shape.length || t.shape.some((d, i) => d !== p.shape[i]))
      throw new ConfigError(p.name, `has shape [${t.shape}] in ${t.file}; config.json implies [${p.shape}]`);
    found.delete(p.name);
  }
  for (const [name, t] of found) {
    if (IGNORED_TENSOR.test(name)) continue;
    const hint = name === 'lm_head.weight' ? ' (config.json says tie_word_embeddings: true)' : '';
    throw new ConfigError(name, `in ${t.file} is not a parameter of this ${config.modelType} model${hint}`);
  }
  return [...tables.keys(), ...(tables.size > 1 || (await isFile(join(dir, INDEX_FILE))) ? [INDEX_FILE] : [])];
}

/** Tensor name → shape, per weight file, read from the headers. */
async function tensorTables(dir: string): Promise<Map<string, Map<string, readonly number[]>>> {
  let files: string[];
  if (await isFile(join(dir, INDEX_FILE))) {
    files = [
      ...new Set(Object.values(parseIndex(await readFile(join(dir, INDEX_FILE), 'utf8'), join(dir, INDEX_FILE)))),
    ];
  } else if (await isFile(join(dir, SINGLE_FILE))) {
    files = [SINGLE_FILE];
  } else {
    throw new ConfigError('model', `${dir} has no ${SINGLE_FILE} or ${INDEX_FILE} (only safetensors weights are read)`);
  }
  const out = new Map<string, Map<string, readonly number[]>>();
  for (const file of files) {
    const reader = await SafetensorsReader.open(join(dir, file)).catch((cause: unknown) => {
      throw new ConfigError('model', `${join(dir, file)}: ${(cause as Error).message}`, { cause });
    });
    try {
      out.set(file, new Map(reader.header.tensors.map((t) => [t.name, t.shape])));
    } finally {
      await reader.close();
    }
  }
  return out;
}

async function isFile(path: string): Promise<boolean> {
  return (await stat(path).catch(() => null))?.isFile() ?? false;
}
