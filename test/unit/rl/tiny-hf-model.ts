/**
 * Tiny random-init models at the real Qwen3 and Llama 3 architectures, saved as Hugging Face model
 * directories with the real tokenizers and chat templates (the full 151,936 / 128,256-token embeddings;
 * a few layers of width 32 beside them): what `--model` is pointed at in the tests.
 */
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseModelConfig, writeModelConfig } from '../../../src/policy/io/config.ts';
import type { DType } from '../../../src/policy/io/dtype.ts';
import { writeModelWeights } from '../../../src/policy/io/sharded.ts';
import { buildLayout } from '../../../src/policy/model/layout.ts';
import { initParams, toNamed } from '../../../src/policy/model/params.ts';
import { resolveConfig } from '../../../src/rl/config.ts';
import { type RealTokenizerName, realTokenizerFiles } from '../agent/real-tokenizers.ts';

const ARCH: Record<RealTokenizerName, Record<string, unknown>> = {
  qwen3: {
    model_type: 'qwen3',
    vocab_size: 151936,
    head_dim: 16,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    rope_theta: 1e6,
    tie_word_embeddings: true,
    bos_token_id: 151643,
    eos_token_id: 151645,
    max_position_embeddings: 40960,
  },
  llama3: {
    model_type: 'llama',
    vocab_size: 128256,
    num_attention_heads: 4,
    num_key_value_heads: 1,
    rope_theta: 500000,
    rms_norm_eps: 1e-5,
    rope_scaling: {
      rope_type: 'llama3',
      factor: 32,
      low_freq_factor: 1,
      high_freq_factor: 4,
      original_max_position_embeddings: 8192,
    },
    tie_word_embeddings: false,
    bos_token_id: 128000,
    eos_token_id: [128001, 128008, 128009],
    max_position_embeddings: 131072,
  },
};
const GENERATION_EOS: Record<RealTokenizerName, number[]> = {
  qwen3: [151645, 151643],
  llama3: [128001, 128008, 128009],
};

export interface TinyModelOptions {
  readonly dtype?: Extract<DType, 'F32' | 'BF16'>;
  readonly seed?: number;
  readonly layers?: number;
  /** Shard the weights (bytes per shard) as save_pretrained does for large models. */
  readonly maxShardBytes?: number;
}

/** Writes the model directory `dir` and returns it. */
export async function writeTinyModel(dir: string, name: RealTokenizerName, o: TinyModelOptions = {}): Promise<string> {
  const config = parseModelConfig({
    ...ARCH[name],
    hidden_size: 32,
    intermediate_size: 64,
    num_hidden_layers: o.layers ?? 2,
    initializer_range: 0.05,
  });
  const layout = buildLayout(config);
  const dtype = o.dtype ?? 'F32';
  const named = Object.entries(toNamed(layout, initParams(layout, o.seed ?? 7))).map(
    ([k, t]) => [k, { ...t, dtype }] as const,
  );
  await mkdir(dir, { recursive: true });
  await writeModelWeights(dir, named, { maxShardBytes: o.maxShardBytes });
  await writeFile(join(dir, 'config.json'), writeModelConfig(config));
  for (const [file, text] of Object.entries(realTokenizerFiles(name))) await writeFile(join(dir, file), text);
  await writeFile(
    join(dir, 'generation_config.json'),
    `${JSON.stringify({ eos_token_id: GENERATION_EOS[name] }, null, 2)}\n`,
  );
  return dir;
}

const PAPER = JSON.parse(readFileSync(new URL('../../../configs/qwen2.5-0.5b-sokoban.json', import.meta.url), 'utf8'));
/** What makes the paper's config a test: 2 × 2 rollouts of 2 turns, short answers, one thread (bitwise). */
const SMALL = [
  'iterations=2',
  'envGroups=2',
  'groupSize=2',
  'maxTurns=2',
  'maxResponseTokens=12',
  'miniBatchSize=2',
  'valSeeds=2',
  'valEvery=1',
  'checkpointEvery=1',
  'modelContext=2048',
  'threads=1',
];

/** configs/qwen2.5-0.5b-sokoban.json on `model`, shrunk to test size. */
export function paperConfig(model: string, extra: string[] = []) {
  return resolveConfig({ file: PAPER, overrides: [`model=${model}`, ...SMALL, ...extra] });
}
