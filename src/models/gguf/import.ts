/**
 * `starpo models import`: a GGUF file as a Hugging Face model directory (config.json, model.safetensors in
 * float32, tokenizer.json, tokenizer_config.json with the chat template, generation_config.json), the layout
 * every `--model` route ends in. Everything is checked before a byte is written (architecture, every tensor
 * mapped with the shape the config implies, the tokenizer); the directory is built under a temporary name and
 * renamed into place when complete, so an interrupted import never leaves a directory that looks whole.
 * Weights are dequantised one tensor at a time but held until written: an import needs the float32 model's
 * size in memory, as training it does.
 */
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { ConfigError } from '../../errors.ts';
import { hfParameterNames, type ModelConfig, writeModelConfig } from '../../policy/io/config.ts';
import type { Tensor } from '../../policy/io/dtype.ts';
import { GENERATION_CONFIG_FILE } from '../../policy/io/model-dir.ts';
import { writeModelWeights } from '../../policy/io/sharded.ts';
import { ggufModelConfig } from './config.ts';
import { dequantize } from './dequant.ts';
import { ggufArchitecture, hfTensorName, permuteHeadRows, permutedHeads } from './names.ts';
import { GgufFile, type GgufTensorInfo } from './reader.ts';
import { ropeScalingOf } from './rope.ts';
import { ggufTokenizerFiles } from './tokenizer.ts';

/** Llama 3 rope scaling's factors: read into the config, not a weight. */
const ROPE_FREQS = 'rope_freqs.weight';

export interface ImportResult {
  readonly dir: string;
  readonly config: ModelConfig;
  /** Tensor counts by stored type, e.g. {Q4_1: 210, F32: 61, Q8_0: 1}. */
  readonly storedTypes: Readonly<Record<string, number>>;
  readonly files: readonly string[];
}

export interface ImportOptions {
  /** Called after each tensor is dequantised. */
  readonly onTensor?: (done: number, total: number, name: string) => void;
}

/** A checked plan: what will be written, before anything is. */
interface ImportPlan {
  readonly config: ModelConfig;
  readonly configJson: string;
  readonly tokenizerFiles: Record<string, string>;
  readonly generationConfig: string;
  readonly tensors: readonly { info: GgufTensorInfo; hfName: string; heads: number }[];
}

async function plan(file: GgufFile): Promise<ImportPlan> {
  const source = file.path;
  const arch = ggufArchitecture(file.metadata.get('general.architecture'), source);
  const tok = ggufTokenizerFiles(file.metadata, source);
  const tensorNames = new Set(file.header.tensors.map((t) => t.name));
  const facts = { arch, metadata: file.metadata, tensorNames, ...tok, source };
  let { config } = ggufModelConfig(facts);
  const ropeFreqs = file.tensor(ROPE_FREQS);
  if (ropeFreqs) {
    const stored = dequantize(ropeFreqs.type, await file.raw(ropeFreqs), ropeFreqs.dims[0] ?? 0);
    config = ggufModelConfig({ ...facts, ropeScaling: ropeScalingOf(config, stored, source) }).config;
  }
  const expected = new Map(hfParameterNames(config).map((p) => [p.name, p.shape]));
  const heads = { attention: config.numHeads, keyValue: config.numKvHeads };
  const tensors = file.header.tensors
    .filter((t) => t.name !== ROPE_FREQS)
    .map((info) => {
      const hfName = hfTensorName(info.name);
      const shape = hfName === null ? undefined : expected.get(hfName);
      if (hfName === null || !shape)
        throw new ConfigError('model', `${source}: tensor ${info.name} is not part of a ${arch} model starpo runs`);
      const stored = [...info.dims].reverse();
      if (stored.length !== shape.length || stored.some((d, i) => d !== shape[i]))
        throw new ConfigError(
          'model',
          `${source}: tensor ${info.name} has shape [${stored}]; the metadata implies [${shape}]`,
        );
      expected.delete(hfName);
      return { info, hfName, heads: permutedHeads(arch, info.name, heads) };
    });
  const [missing] = expected.keys();
  if (missing !== undefined) throw new ConfigError('model', `${source}: has no tensor for ${missing}`);
  const generation = { bos_token_id: tok.bosTokenId, eos_token_id: tok.eosTokenId, pad_token_id: tok.padTokenId };
  return {
    config,
    configJson: writeModelConfig(config),
    tokenizerFiles: tok.files,
    generationConfig: `${JSON.stringify(generation, null, 2)}\n`,
    tensors,
  };
}

/** Dequantised weights under their Hugging Face names, in Hugging Face row order. */
async function readWeights(file: GgufFile, p: ImportPlan, o: ImportOptions): Promise<Map<string, Tensor>> {
  const weights = new Map<string, Tensor>();
  for (const [i, t] of p.tensors.entries()) {
    const shape = [...t.info.dims].reverse();
    const count = shape.reduce((a, b) => a * b, 1);
    let data = dequantize(t.info.type, await file.raw(t.info), count);
    if (t.heads > 0) data = permuteHeadRows(data, shape[0]!, t.heads, false);
    weights.set(t.hfName, { dtype: 'F32', shape, data });
    o.onTensor?.(i + 1, p.tensors.length, t.info.name);
  }
  return weights;
}

/** Checks a GGUF without writing anything; the config it would import as. */
export async function inspectGguf(path: string): Promise<ModelConfig> {
  const file = await GgufFile.open(path);
  try {
    return (await plan(file)).config;
  } finally {
    await file.close();
  }
}

/** Imports `ggufPath` into `outDir` (which must not exist, or be empty). */
export async function importGguf(ggufPath: string, outDir: string, o: ImportOptions = {}): Promise<ImportResult> {
  const out = resolve(outDir);
  if ((await readdir(out).catch(() => [])).length > 0)
    throw new ConfigError('--out', `${outDir} exists and is not empty`);
  const file = await GgufFile.open(ggufPath);
  const partial = join(dirname(out), `.${basename(out)}.partial-${process.pid}`);
  try {
    const p = await plan(file);
    const weights = await readWeights(file, p, o);
    await rm(partial, { recursive: true, force: true });
    await mkdir(partial, { recursive: true });
    const files = [...(await writeModelWeights(partial, weights)).keys()];
    const text: Record<string, string> = {
      'config.json': p.configJson,
      ...p.tokenizerFiles,
      [GENERATION_CONFIG_FILE]: p.generationConfig,
    };
    for (const [name, content] of Object.entries(text)) await writeFile(join(partial, name), content);
    await rm(out, { recursive: true, force: true }); // empty (checked above)
    await rename(partial, out);
    const storedTypes: Record<string, number> = {};
    for (const t of p.tensors) storedTypes[t.info.type] = (storedTypes[t.info.type] ?? 0) + 1;
    return { dir: out, config: p.config, storedTypes, files: [...files, ...Object.keys(text)].sort() };
  } catch (err) {
    await rm(partial, { recursive: true, force: true });
    throw err;
  } finally {
    await file.close();
  }
}
