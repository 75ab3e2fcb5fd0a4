/**
 * A GGUF's model metadata (`{arch}.*` keys, llama.cpp's names) as a Hugging Face config.json object, checked
 * by starpo's own config parser. The file states the whole shape, so every size is taken from it rather than
 * from a class default; settings starpo does not run (rope scaling other than Llama 3's, partial rotary,
 * per-layer head counts, Llama attention biases) are refused by name instead of being dropped.
 */
import { ConfigError } from '../../errors.ts';
import { ARCHITECTURES } from '../../policy/io/config-keys.ts';
import { type ModelConfig, parseModelConfig, type RopeScaling } from '../../policy/io/config.ts';
import { writeRope } from '../../policy/io/rope-scaling.ts';
import type { GgufArchitecture } from './names.ts';
import type { GgufValue } from './reader.ts';

export interface GgufModelFacts {
  readonly arch: GgufArchitecture;
  readonly metadata: ReadonlyMap<string, GgufValue>;
  readonly tensorNames: ReadonlySet<string>;
  readonly vocabSize: number;
  readonly bosTokenId: number | null;
  readonly eosTokenId: number;
  readonly padTokenId: number | null;
  readonly source: string;
  /** Llama 3 rope scaling recovered from the file's rope_freqs tensor (rope.ts); null = plain RoPE. */
  readonly ropeScaling?: RopeScaling | null;
}

export interface GgufModelConfig {
  /** The config.json object as written. */
  readonly json: Record<string, unknown>;
  readonly config: ModelConfig;
}

export function ggufModelConfig(m: GgufModelFacts): GgufModelConfig {
  const { arch, source } = m;
  const int = (key: string, fallback?: number): number => {
    const v = m.metadata.get(`${arch}.${key}`) ?? fallback;
    if (Array.isArray(v)) throw unsupported(`${arch}.${key} varies per layer`);
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0)
      throw new ConfigError('model', `${source}: ${arch}.${key} is ${v === undefined ? 'missing' : String(v)}`);
    return v;
  };
  const float = (key: string, fallback: number): number => {
    const v = m.metadata.get(`${arch}.${key}`) ?? fallback;
    if (typeof v !== 'number' || !(v > 0)) throw new ConfigError('model', `${source}: ${arch}.${key} is ${String(v)}`);
    return v;
  };
  const unsupported = (what: string) => new ConfigError('model', `${source}: ${what}, which starpo does not run`);

  const hidden = int('embedding_length');
  const heads = int('attention.head_count');
  const headDim = int('attention.key_length', hidden / heads);
  if (int('attention.value_length', headDim) !== headDim) throw unsupported('value heads differ in width from keys');
  if (int('rope.dimension_count', headDim) !== headDim) throw unsupported('rotary embeddings cover part of a head');
  const scaling = m.metadata.get(`${arch}.rope.scaling.type`);
  if (scaling !== undefined && scaling !== 'none') throw unsupported(`rope scaling ${JSON.stringify(scaling)}`);
  if (m.tensorNames.has('rope_freqs.weight') && arch !== 'llama') throw unsupported(`rope_freqs on a ${arch} model`);
  const hasBias = [...m.tensorNames].some((n) => /^blk\.\d+\.attn_[qkv]\.bias$/.test(n));
  if (arch === 'llama' && hasBias) throw unsupported('attention biases on a llama model');
  const vocab = m.metadata.get(`${arch}.vocab_size`) ?? m.vocabSize;
  if (vocab !== m.vocabSize)
    throw new ConfigError('model', `${source}: ${arch}.vocab_size ${String(vocab)} but ${m.vocabSize} tokens`);

  const json: Record<string, unknown> = {
    architectures: [ARCHITECTURES[arch]],
    model_type: arch,
    vocab_size: m.vocabSize,
    hidden_size: hidden,
    intermediate_size: int('feed_forward_length'),
    num_hidden_layers: int('block_count'),
    num_attention_heads: heads,
    num_key_value_heads: int('attention.head_count_kv', heads),
    head_dim: headDim,
    hidden_act: 'silu',
    rms_norm_eps: float('attention.layer_norm_rms_epsilon', 1e-6),
    ...writeRope(float('rope.freq_base', 10000), m.ropeScaling ?? null),
    max_position_embeddings: int('context_length'),
    tie_word_embeddings: !m.tensorNames.has('output.weight'),
    bos_token_id: m.bosTokenId,
    eos_token_id: m.eosTokenId,
    pad_token_id: m.padTokenId,
    torch_dtype: 'float32',
  };
  if (arch === 'llama') Object.assign(json, { attention_bias: false, mlp_bias: false });
  if (arch !== 'llama') json.use_sliding_window = false;
  return { json, config: parseModelConfig(json) };
}
