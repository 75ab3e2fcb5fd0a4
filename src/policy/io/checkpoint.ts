/**
 * A training checkpoint as a directory that Hugging Face tools can also read:
 *   model.safetensors (or shards + index)  weights under HF names, {format: pt}
 *   training_state.safetensors             optimizer moments `optimizer.m.<name>` / `optimizer.v.<name>`;
 *                                          step, RNG states and free metadata in __metadata__
 *   config.json, tokenizer files           as given
 *   manifest.json                          sha256 and size of every file above, written last
 * The manifest is the commit point: a directory without one is an incomplete save, and loading verifies every
 * hash first, so a flipped byte anywhere is a CorruptDataError rather than silently wrong weights.
 */
import { mkdir, readFile, readdir, rm, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { CorruptDataError, StarpoError } from '../../errors.ts';
import { writeBytesAtomic } from '../../storage/atomic-file.ts';
import { fileDigest, sha256File } from '../../storage/hash.ts';
import { parseModelConfig, writeModelConfig, type ModelConfig } from './config.ts';
import type { Tensor } from './dtype.ts';
import { readSafetensors, writeSafetensors } from './safetensors.ts';
import { readModelWeights, writeModelWeights } from './sharded.ts';

export const MANIFEST_FILE = 'manifest.json';
export const TRAINING_STATE_FILE = 'training_state.safetensors';
export const CONFIG_FILE = 'config.json';
const FORMAT = 'starpo-checkpoint';
const WEIGHT_FILE = /^model(-\d{5}-of-\d{5})?\.safetensors(\.index\.json)?$/;

export interface OptimizerMoments {
  /** AdamW first moments by parameter name. */
  readonly m: ReadonlyMap<string, Tensor>;
  /** AdamW second moments by parameter name. */
  readonly v: ReadonlyMap<string, Tensor>;
}

export interface TrainingCheckpoint {
  readonly config: ModelConfig;
  /** Weights under their HF names (see hfParameterNames). */
  readonly weights: ReadonlyMap<string, Tensor>;
  readonly optimizer: OptimizerMoments | null;
  /** Optimizer steps taken. */
  readonly step: number;
  /** Serialised RNG states by name (e.g. {sampling: rng.getState()}). */
  readonly rng: Readonly<Record<string, string>>;
  /** Tokenizer files by file name, e.g. tokenizer.json and tokenizer_config.json. */
  readonly tokenizerFiles: Readonly<Record<string, string>>;
  /** Free-form strings kept with the training state (run id, iteration, …). */
  readonly metadata?: Readonly<Record<string, string>>;
}

interface Manifest {
  format: typeof FORMAT;
  version: 1;
  step: number;
  tokenizerFiles: string[];
  files: Record<string, { sha256: string; bytes: number }>;
}

/** Each saved file's SHA-256 (hex) by file name, as the checkpoint's manifest lists it. */
export type FileDigests = ReadonlyMap<string, string>;

export interface SaveOptions {
  /** Passed to writeModelWeights; weights beyond it are sharded. */
  readonly maxShardBytes?: number;
}

/**
 * Saves a checkpoint into `dir` (created if needed); an existing checkpoint there is replaced. Returns the digests
 * its manifest lists, so a store the files then go to need not read them again to hash them.
 */
export async function saveCheckpoint(
  dir: string,
  ckpt: TrainingCheckpoint,
  options: SaveOptions = {},
): Promise<FileDigests> {
  if (!Number.isSafeInteger(ckpt.step) || ckpt.step < 0)
    throw new StarpoError(`checkpoint step ${ckpt.step} is not a count`);
  const tokenizerNames = Object.keys(ckpt.tokenizerFiles);
  for (const name of tokenizerNames) {
    if (basename(name) !== name || name === MANIFEST_FILE || name === CONFIG_FILE || name.endsWith('.safetensors')) {
      throw new StarpoError(`tokenizer file name ${JSON.stringify(name)} is not allowed`);
    }
  }
  await mkdir(dir, { recursive: true });
  // Invalidate first: from here until the new manifest lands, the directory reads as an incomplete save.
  await rm(join(dir, MANIFEST_FILE), { force: true });
  // Weights from an earlier save with another sharding would otherwise be picked up by readModelWeights.
  for (const name of await readdir(dir)) {
    if (WEIGHT_FILE.test(name)) await rm(join(dir, name), { force: true });
  }
  // The weights and the training state are hashed as they are written; the small files are read back.
  const known = await writeModelWeights(dir, ckpt.weights, { maxShardBytes: options.maxShardBytes });
  const state = await writeSafetensors(
    join(dir, TRAINING_STATE_FILE),
    optimizerTensors(ckpt.optimizer),
    stateMetadata(ckpt),
  );
  known.set(TRAINING_STATE_FILE, state.sha256);
  await writeBytesAtomic(join(dir, CONFIG_FILE), writeModelConfig(ckpt.config));
  for (const [name, text] of Object.entries(ckpt.tokenizerFiles)) await writeBytesAtomic(join(dir, name), text);
  const files = [...known.keys(), CONFIG_FILE, ...tokenizerNames];
  const manifest: Manifest = { format: FORMAT, version: 1, step: ckpt.step, tokenizerFiles: tokenizerNames, files: {} };
  for (const name of files) {
    const { sha256, sizeBytes } = await fileDigest(join(dir, name), known.get(name));
    manifest.files[name] = { sha256, bytes: sizeBytes };
  }
  await writeBytesAtomic(join(dir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
  return new Map(Object.entries(manifest.files).map(([name, f]) => [name, f.sha256]));
}

/**
 * Loads a checkpoint after verifying every file against the manifest. `verified`: files whose bytes the caller has
 * just checked against these digests (a store's download); each is hashed again only where its digest differs from
 * the manifest's.
 */
export async function loadCheckpoint(dir: string, verified?: FileDigests): Promise<TrainingCheckpoint> {
  const manifest = await verifyCheckpoint(dir, verified);
  const config = parseModelConfig(await readFile(join(dir, CONFIG_FILE), 'utf8'));
  const weights = await readModelWeights(dir);
  const state = await readSafetensors(join(dir, TRAINING_STATE_FILE));
  const tokenizerFiles: Record<string, string> = {};
  for (const name of manifest.tokenizerFiles) tokenizerFiles[name] = await readFile(join(dir, name), 'utf8');
  const { step, rng, metadata } = parseStateMetadata(state.metadata);
  if (step !== manifest.step)
    throw new CorruptDataError(`${dir}: manifest step ${manifest.step} != training state step ${step}`);
  return { config, weights, optimizer: splitOptimizer(state.tensors), step, rng, tokenizerFiles, metadata };
}

/** Checks the manifest and every file's size and sha256 (see loadCheckpoint's `verified`); returns the manifest. */
export async function verifyCheckpoint(dir: string, verified?: FileDigests): Promise<Manifest> {
  let text: string;
  try {
    text = await readFile(join(dir, MANIFEST_FILE), 'utf8');
  } catch (cause) {
    throw new CorruptDataError(`${dir}: no ${MANIFEST_FILE} (missing or incomplete checkpoint)`, { cause });
  }
  const manifest = parseManifest(text, dir);
  for (const [name, expected] of Object.entries(manifest.files)) {
    const path = join(dir, name);
    let bytes: number;
    try {
      bytes = (await stat(path)).size;
    } catch (cause) {
      throw new CorruptDataError(`${dir}: ${name} listed in the manifest is missing`, { cause });
    }
    if (bytes !== expected.bytes)
      throw new CorruptDataError(`${dir}: ${name} is ${bytes} bytes, manifest says ${expected.bytes}`);
    if (verified?.get(name) === expected.sha256) continue;
    if ((await sha256File(path)) !== expected.sha256)
      throw new CorruptDataError(`${dir}: ${name} fails its sha256 check`);
  }
  return manifest;
}

function parseManifest(text: string, dir: string): Manifest {
  let m: Partial<Manifest> | null;
  try {
    m = JSON.parse(text);
  } catch (cause) {
    throw new CorruptDataError(`${dir}: ${MANIFEST_FILE} is not valid JSON`, { cause });
  }
  const files = m?.files;
  const ok =
    m?.format === FORMAT &&
    m.version === 1 &&
    Number.isSafeInteger(m.step) &&
    Array.isArray(m.tokenizerFiles) &&
    typeof files === 'object' &&
    files !== null &&
    Object.entries(files).every(
      ([name, f]) => basename(name) === name && /^[0-9a-f]{64}$/.test(f?.sha256) && Number.isSafeInteger(f?.bytes),
    ) &&
    [CONFIG_FILE, TRAINING_STATE_FILE, ...m.tokenizerFiles].every((name) => name in files);
  if (!ok) throw new CorruptDataError(`${dir}: ${MANIFEST_FILE} is not a ${FORMAT} v1 manifest`);
  return m as Manifest;
}

function optimizerTensors(optimizer: OptimizerMoments | null): [string, Tensor][] {
  if (!optimizer) return [];
  return [
    ...[...optimizer.m].map(([name, t]): [string, Tensor] => [`optimizer.m.${name}`, t]),
    ...[...optimizer.v].map(([name, t]): [string, Tensor] => [`optimizer.v.${name}`, t]),
  ];
}

function splitOptimizer(tensors: Map<string, Tensor>): OptimizerMoments | null {
  if (tensors.size === 0) return null;
  const m = new Map<string, Tensor>();
  const v = new Map<string, Tensor>();
  for (const [key, t] of tensors) {
    if (key.startsWith('optimizer.m.')) m.set(key.slice('optimizer.m.'.length), t);
    else if (key.startsWith('optimizer.v.')) v.set(key.slice('optimizer.v.'.length), t);
    else throw new CorruptDataError(`${TRAINING_STATE_FILE}: unexpected tensor ${key}`);
  }
  return { m, v };
}

/** __metadata__ is a flat string map: step, rng.<name>, meta.<key>. */
function stateMetadata(ckpt: TrainingCheckpoint): Record<string, string> {
  const out: Record<string, string> = { format: FORMAT, step: String(ckpt.step) };
  for (const [name, state] of Object.entries(ckpt.rng)) out[`rng.${name}`] = state;
  for (const [key, value] of Object.entries(ckpt.metadata ?? {})) out[`meta.${key}`] = value;
  return out;
}

function parseStateMetadata(meta: Readonly<Record<string, string>>) {
  const step = Number(meta.step);
  if (meta.format !== FORMAT || !/^\d+$/.test(meta.step ?? '') || !Number.isSafeInteger(step)) {
    throw new CorruptDataError(`${TRAINING_STATE_FILE}: __metadata__ lacks a valid format and step`);
  }
  const rng: Record<string, string> = {};
  const metadata: Record<string, string> = {};
  for (const [key, value] of Object.entries(meta)) {
    if (key.startsWith('rng.')) rng[key.slice(4)] = value;
    else if (key.startsWith('meta.')) metadata[key.slice(5)] = value;
  }
  return { step, rng, metadata };
}
