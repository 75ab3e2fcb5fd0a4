/**
 * A Hugging Face model directory (as `starpo export` writes it, or any llama / qwen2 / qwen3 checkpoint starpo
 * opens) as one GGUF file, written as llama.cpp's convert_hf_to_gguf.py writes these architectures: the
 * `{arch}.*` hyperparameters, the tokenizer (export-vocab.ts), llama.cpp's tensor names, Llama q/k rows in
 * its rotary order, Llama 3 rope scaling as a `rope_freqs` tensor, 1-D tensors (norms, biases) in F32 and
 * matrices in the chosen type (Q8_0 rows that are not whole blocks fall back to F16, as the converter's do).
 * Weights are read, converted and written one tensor at a time.
 */
import { readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { ConfigError } from '../../errors.ts';
import { hfParameterNames, type ModelConfig } from '../../policy/io/config.ts';
import { CHAT_TEMPLATE_FILE, openModelDirectory } from '../../policy/io/model-dir.ts';
import { SafetensorsReader } from '../../policy/io/safetensors.ts';
import { INDEX_FILE, SINGLE_FILE, parseIndex } from '../../policy/io/sharded.ts';
import { vocabMetadata } from './export-vocab.ts';
import { llama3RopeFactors } from './rope.ts';
import { ggufArchitecture, ggufTensorName, permuteHeadRows, permutedHeads } from './names.ts';
import { type ExportType, canStore, quantize } from './quantize.ts';
import type { GgmlTypeName } from './types.ts';
import { GGUF_ALIGNMENT, type GgufEntry, type GgufTensorSource, gguf, writeGguf } from './writer.ts';

/** llama.cpp's LlamaFileType for each export type (general.file_type). */
const FILE_TYPES: Readonly<Record<ExportType, number>> = { F32: 0, F16: 1, Q8_0: 7 };

export interface GgufExportOptions {
  /** Storage type of the matrices (default F32). */
  readonly dtype?: ExportType;
  /** general.name (default: the directory's name). */
  readonly name?: string;
  readonly onTensor?: (done: number, total: number) => void;
}

export interface GgufExportResult {
  readonly out: string;
  readonly arch: string;
  /** Tensor counts by stored type, e.g. {F32: 9, Q8_0: 15}. */
  readonly storedTypes: Readonly<Record<string, number>>;
}

/** The `general.*` and `{arch}.*` metadata for a config. */
export function modelMetadata(config: ModelConfig, name: string, dtype: ExportType): [string, GgufEntry][] {
  const arch = ggufArchitecture(config.modelType, name);
  const c = config;
  const out: [string, GgufEntry][] = [
    ['general.architecture', gguf.str(arch)],
    ['general.type', gguf.str('model')],
    ['general.name', gguf.str(name)],
    [`${arch}.block_count`, gguf.u32(c.numLayers)],
    [`${arch}.context_length`, gguf.u32(c.maxPositionEmbeddings)],
    [`${arch}.embedding_length`, gguf.u32(c.hiddenSize)],
    [`${arch}.feed_forward_length`, gguf.u32(c.intermediateSize)],
    [`${arch}.attention.head_count`, gguf.u32(c.numHeads)],
    [`${arch}.attention.head_count_kv`, gguf.u32(c.numKvHeads)],
    [`${arch}.rope.freq_base`, gguf.f32(c.ropeTheta)],
    [`${arch}.attention.layer_norm_rms_epsilon`, gguf.f32(c.rmsNormEps)],
  ];
  // llama.cpp assumes hidden / heads; Qwen3 files always state it (its head_dim is set in every config).
  if (arch === 'qwen3' || c.headDim * c.numHeads !== c.hiddenSize)
    out.push(
      [`${arch}.attention.key_length`, gguf.u32(c.headDim)],
      [`${arch}.attention.value_length`, gguf.u32(c.headDim)],
    );
  out.push(
    ['general.file_type', gguf.u32(FILE_TYPES[dtype])],
    [`${arch}.vocab_size`, gguf.u32(c.vocabSize)],
    [`${arch}.rope.dimension_count`, gguf.u32(c.headDim)],
    ['general.quantization_version', gguf.u32(2)],
    ['general.alignment', gguf.u32(GGUF_ALIGNMENT)],
  );
  return out;
}

/** Which safetensors file holds each tensor. */
async function weightFiles(dir: string): Promise<Map<string, string>> {
  const index = await readFile(join(dir, INDEX_FILE), 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw err;
  });
  if (index === null) return new Map();
  return new Map(Object.entries(parseIndex(index, join(dir, INDEX_FILE))));
}

/** Writes the model directory `dir` as the GGUF file `out` (replaced only when complete). */
export async function exportModelGguf(dir: string, out: string, o: GgufExportOptions = {}): Promise<GgufExportResult> {
  const model = await openModelDirectory(dir);
  const { config } = model;
  const dtype = o.dtype ?? 'F32';
  const arch = ggufArchitecture(config.modelType, model.dir);
  const tokenizerJson = model.assets['tokenizer.json'];
  if (tokenizerJson === undefined)
    throw new ConfigError('model', `${model.dir} has no tokenizer.json, which a GGUF file must carry`);
  const configJson = JSON.parse(await readFile(join(model.dir, 'config.json'), 'utf8')) as Record<string, unknown>;
  const metadata = new Map<string, GgufEntry>([
    ...modelMetadata(config, o.name ?? basename(model.dir), dtype),
    ...vocabMetadata({
      tokenizerJson,
      tokenizerConfig: model.assets['tokenizer_config.json'],
      chatTemplateFile: model.assets[CHAT_TEMPLATE_FILE],
      modelConfig: configJson,
      vocabSize: config.vocabSize,
      source: model.dir,
    }),
  ]);

  const shards = await weightFiles(model.dir);
  const readers = new Map<string, SafetensorsReader>();
  const reader = async (hfName: string) => {
    const file = shards.get(hfName) ?? SINGLE_FILE;
    let r = readers.get(file);
    if (!r) readers.set(file, (r = await SafetensorsReader.open(join(model.dir, file))));
    return r;
  };
  const heads = { attention: config.numHeads, keyValue: config.numKvHeads };
  const tensors: GgufTensorSource[] = [];
  // llama.cpp applies rope_freqs in its llama graph only.
  if (arch !== 'llama' && config.ropeScaling)
    throw new ConfigError('rope_scaling', `${model.dir}: llama3 rope scaling on a ${arch} model has no GGUF form`);
  const ropeFactors = llama3RopeFactors(config);
  if (ropeFactors)
    tensors.push({
      name: 'rope_freqs.weight',
      shape: [ropeFactors.length],
      type: 'F32',
      bytes: () => quantize('F32', ropeFactors),
    });
  for (const p of hfParameterNames(config)) {
    const name = ggufTensorName(p.name);
    if (name === null) throw new ConfigError('model', `${p.name} has no llama.cpp name`);
    const rowLength = p.shape[p.shape.length - 1]!;
    // The converter's rule: 1-D tensors stay F32 (llama.cpp reads norms and biases as F32).
    const type: ExportType = p.shape.length < 2 ? 'F32' : canStore(dtype, rowLength) ? dtype : 'F16';
    const rows = p.shape[0]!;
    tensors.push({
      name,
      shape: p.shape,
      type: type satisfies GgmlTypeName,
      bytes: async () => {
        const t = await (await reader(p.name)).read(p.name);
        if (!(t.data instanceof Float32Array))
          throw new ConfigError('model', `${p.name} is stored as ${t.dtype}; GGUF export reads F32, F16 or BF16`);
        const n = permutedHeads(arch, name, heads);
        return quantize(type, n > 0 ? permuteHeadRows(t.data, rows, n, true) : t.data);
      },
    });
  }
  try {
    await writeGguf(out, metadata, tensors, { onTensor: o.onTensor });
  } finally {
    for (const r of readers.values()) await r.close();
  }
  const storedTypes: Record<string, number> = {};
  for (const t of tensors) storedTypes[t.type] = (storedTypes[t.type] ?? 0) + 1;
  return { out, arch, storedTypes };
}
