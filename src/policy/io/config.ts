/**
 * The model configuration: one frozen, typed view of a Hugging Face `config.json` for the Qwen2/Llama decoder
 * family, the JSON written back for HF compatibility, and the HF tensor-name table the weights use.
 */
import { ConfigError } from '../../errors.ts';

export type ModelType = 'qwen2' | 'llama';

export interface ModelConfig {
  readonly modelType: ModelType;
  readonly vocabSize: number;
  /** Model width D. */
  readonly hiddenSize: number;
  /** SwiGLU inner width. */
  readonly intermediateSize: number;
  readonly numLayers: number;
  readonly numHeads: number;
  /** Grouped-query attention: each K/V head serves numHeads / numKvHeads query heads. */
  readonly numKvHeads: number;
  /** Per-head width; hiddenSize / numHeads unless config.json sets head_dim. */
  readonly headDim: number;
  readonly rmsNormEps: number;
  readonly ropeTheta: number;
  readonly maxPositionEmbeddings: number;
  /** lm_head shares embed_tokens' matrix (no lm_head.weight is stored). */
  readonly tieWordEmbeddings: boolean;
  /**
   * q/k/v projections carry a bias. Fixed by the architecture, as in HF transformers: Qwen2Attention always
   * builds q/k/v with bias (and o_proj without); Llama has none (its `attention_bias: true` would also put a
   * bias on o_proj, which this engine does not implement, so it is refused).
   */
  readonly attentionBias: boolean;
  readonly hiddenAct: 'silu';
  /** Std of the normal initialiser for models trained from scratch (HF default 0.02). */
  readonly initializerRange: number;
  readonly bosTokenId: number | null;
  /** HF allows one id or a list; kept as a list. */
  readonly eosTokenIds: readonly number[];
}

/** HF class defaults where config.json may omit a field; the size fields are required instead. */
const DEFAULTS: Readonly<Record<ModelType, { maxPositionEmbeddings: number }>> = {
  qwen2: { maxPositionEmbeddings: 32768 },
  llama: { maxPositionEmbeddings: 2048 },
};

const ARCHITECTURES: Readonly<Record<ModelType, string>> = { qwen2: 'Qwen2ForCausalLM', llama: 'LlamaForCausalLM' };

/** Parses and validates a config.json object (or its text); every error names the offending field. */
export function parseModelConfig(json: unknown): ModelConfig {
  const raw = typeof json === 'string' ? parseText(json) : json;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new ConfigError('config.json', 'is not an object');
  const f = new Fields(raw as Record<string, unknown>);
  const modelType = f.modelType();
  const numHeads = f.int('num_attention_heads');
  const hiddenSize = f.int('hidden_size');
  const numKvHeads = f.int('num_key_value_heads', numHeads);
  if (numHeads % numKvHeads !== 0) {
    throw new ConfigError('num_key_value_heads', `${numKvHeads} does not divide num_attention_heads ${numHeads}`);
  }
  const headDim = f.optionalInt('head_dim') ?? derivedHeadDim(hiddenSize, numHeads);
  if (headDim % 2 !== 0) throw new ConfigError('head_dim', `${headDim} must be even for rotary embeddings`);
  f.unsupported();
  const config: ModelConfig = {
    modelType,
    vocabSize: f.int('vocab_size'),
    hiddenSize,
    intermediateSize: f.int('intermediate_size'),
    numLayers: f.int('num_hidden_layers'),
    numHeads,
    numKvHeads,
    headDim,
    rmsNormEps: f.positive('rms_norm_eps', 1e-6),
    ropeTheta: f.positive('rope_theta', 10000),
    maxPositionEmbeddings: f.int('max_position_embeddings', DEFAULTS[modelType].maxPositionEmbeddings),
    tieWordEmbeddings: f.bool('tie_word_embeddings', false),
    attentionBias: f.attentionBias(modelType),
    hiddenAct: f.hiddenAct(),
    initializerRange: f.positive('initializer_range', 0.02),
    bosTokenId: f.tokenIds('bos_token_id')[0] ?? null,
    eosTokenIds: Object.freeze(f.tokenIds('eos_token_id')),
  };
  return Object.freeze(config);
}

function derivedHeadDim(hiddenSize: number, numHeads: number): number {
  if (hiddenSize % numHeads !== 0) {
    throw new ConfigError('hidden_size', `${hiddenSize} is not divisible by num_attention_heads ${numHeads}`);
  }
  return hiddenSize / numHeads;
}

function parseText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new ConfigError('config.json', 'is not valid JSON', { cause });
  }
}

/** Typed accessors over the raw object; each throws a ConfigError naming its field. */
class Fields {
  constructor(private readonly raw: Record<string, unknown>) {}

  modelType(): ModelType {
    const v = this.raw.model_type;
    if (v !== 'qwen2' && v !== 'llama')
      throw new ConfigError('model_type', `${JSON.stringify(v)} is not qwen2 or llama`);
    return v;
  }

  int(field: string, fallback?: number): number {
    const v = this.raw[field] ?? fallback;
    if (v === undefined) throw new ConfigError(field, 'is required');
    if (!Number.isSafeInteger(v) || (v as number) <= 0)
      throw new ConfigError(field, `${JSON.stringify(v)} is not a positive integer`);
    return v as number;
  }

  optionalInt(field: string): number | undefined {
    return this.raw[field] == null ? undefined : this.int(field);
  }

  positive(field: string, fallback: number): number {
    const v = this.raw[field] ?? fallback;
    if (typeof v !== 'number' || !(v > 0) || !Number.isFinite(v))
      throw new ConfigError(field, `${JSON.stringify(v)} is not a positive number`);
    return v;
  }

  bool(field: string, fallback: boolean): boolean {
    const v = this.raw[field] ?? fallback;
    if (typeof v !== 'boolean') throw new ConfigError(field, `${JSON.stringify(v)} is not a boolean`);
    return v;
  }

  hiddenAct(): 'silu' {
    const v = this.raw.hidden_act ?? 'silu';
    if (v !== 'silu') throw new ConfigError('hidden_act', `${JSON.stringify(v)} is not supported (only silu)`);
    return v;
  }

  attentionBias(modelType: ModelType): boolean {
    const declared = this.raw.attention_bias;
    if (modelType === 'qwen2' && declared === false) {
      throw new ConfigError('attention_bias', 'Qwen2 always has q/k/v bias in HF; use model_type llama for none');
    }
    if (modelType === 'llama' && declared === true) {
      throw new ConfigError('attention_bias', 'Llama attention_bias also biases o_proj, which is not supported');
    }
    return modelType === 'qwen2';
  }

  tokenIds(field: string): number[] {
    const v = this.raw[field];
    if (v == null) return [];
    const ids = Array.isArray(v) ? v : [v];
    if (!ids.every((id) => Number.isSafeInteger(id) && id >= 0))
      throw new ConfigError(field, `${JSON.stringify(v)} is not a token id`);
    return ids as number[];
  }

  /** Features HF supports that this engine does not: refused rather than silently computed differently. */
  unsupported(): void {
    if (this.raw.rope_scaling != null) throw new ConfigError('rope_scaling', 'is not supported (must be null)');
    if (this.raw.use_sliding_window === true) throw new ConfigError('use_sliding_window', 'is not supported');
    if (this.raw.mlp_bias === true) throw new ConfigError('mlp_bias', 'is not supported');
  }
}

/** The HF config.json text for a config (round-trips through parseModelConfig). */
export function writeModelConfig(config: ModelConfig): string {
  const json: Record<string, unknown> = {
    architectures: [ARCHITECTURES[config.modelType]],
    model_type: config.modelType,
    vocab_size: config.vocabSize,
    hidden_size: config.hiddenSize,
    intermediate_size: config.intermediateSize,
    num_hidden_layers: config.numLayers,
    num_attention_heads: config.numHeads,
    num_key_value_heads: config.numKvHeads,
    head_dim: config.headDim,
    hidden_act: config.hiddenAct,
    rms_norm_eps: config.rmsNormEps,
    rope_theta: config.ropeTheta,
    rope_scaling: null,
    max_position_embeddings: config.maxPositionEmbeddings,
    tie_word_embeddings: config.tieWordEmbeddings,
    attention_bias: config.attentionBias,
    attention_dropout: 0,
    initializer_range: config.initializerRange,
    bos_token_id: config.bosTokenId,
    eos_token_id:
      config.eosTokenIds.length === 1 ? config.eosTokenIds[0] : config.eosTokenIds.length ? config.eosTokenIds : null,
    torch_dtype: 'float32',
    use_cache: true,
  };
  if (config.modelType === 'qwen2') json.use_sliding_window = false;
  return `${JSON.stringify(json, null, 2)}\n`;
}

export interface ParameterName {
  readonly name: string;
  readonly shape: readonly number[];
}

/**
 * The HF tensor names and shapes of a config's parameters, in module order (embedding, layers 0…L-1, final
 * norm, lm_head unless tied). Linear weights are stored [out, in], as torch.nn.Linear keeps them.
 */
export function hfParameterNames(config: ModelConfig): ParameterName[] {
  const { vocabSize: V, hiddenSize: D, intermediateSize: I, headDim, numHeads, numKvHeads } = config;
  const q = numHeads * headDim;
  const kv = numKvHeads * headDim;
  const out: ParameterName[] = [{ name: 'model.embed_tokens.weight', shape: [V, D] }];
  for (let i = 0; i < config.numLayers; i++) {
    const p = `model.layers.${i}`;
    out.push({ name: `${p}.input_layernorm.weight`, shape: [D] });
    for (const [proj, width] of [
      ['q', q],
      ['k', kv],
      ['v', kv],
    ] as const) {
      out.push({ name: `${p}.self_attn.${proj}_proj.weight`, shape: [width, D] });
      if (config.attentionBias) out.push({ name: `${p}.self_attn.${proj}_proj.bias`, shape: [width] });
    }
    out.push(
      { name: `${p}.self_attn.o_proj.weight`, shape: [D, q] },
      { name: `${p}.post_attention_layernorm.weight`, shape: [D] },
      { name: `${p}.mlp.gate_proj.weight`, shape: [I, D] },
      { name: `${p}.mlp.up_proj.weight`, shape: [I, D] },
      { name: `${p}.mlp.down_proj.weight`, shape: [D, I] },
    );
  }
  out.push({ name: 'model.norm.weight', shape: [D] });
  if (!config.tieWordEmbeddings) out.push({ name: 'lm_head.weight', shape: [V, D] });
  return out;
}
