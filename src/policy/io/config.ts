/**
 * The model configuration: one frozen, typed view of a Hugging Face `config.json` for the Qwen2 / Qwen3 /
 * Llama decoder family, the JSON written back for HF compatibility, and the HF tensor-name table the weights
 * use. Parsing is strict: a field that would change the numerics and that this engine does not implement is
 * an error naming it, never silently ignored (see config-keys.ts for the fields understood).
 */
import { ConfigError } from '../../errors.ts';
import { ARCHITECTURES, checkKnownKeys, type ModelType, MODEL_TYPES } from './config-keys.ts';
import { type RopeScaling, parseRope, writeRope } from './rope-scaling.ts';

export type { ModelType } from './config-keys.ts';
export type { RopeScaling } from './rope-scaling.ts';

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
  /** Per-head width; hiddenSize / numHeads unless config.json sets head_dim (Qwen3 always does). */
  readonly headDim: number;
  readonly rmsNormEps: number;
  readonly ropeTheta: number;
  /** Llama 3.x's frequency-dependent stretch of the rotary frequencies (null: plain RoPE). */
  readonly ropeScaling: RopeScaling | null;
  readonly maxPositionEmbeddings: number;
  /** lm_head shares embed_tokens' matrix (no lm_head.weight is stored). */
  readonly tieWordEmbeddings: boolean;
  /**
   * q/k/v projections carry a bias. Fixed by the architecture, as in HF transformers: Qwen2Attention always
   * builds q/k/v with bias (and o_proj without); Llama and Qwen3 have none (their `attention_bias: true` would
   * also put a bias on o_proj, which this engine does not implement, so it is refused).
   */
  readonly attentionBias: boolean;
  /** Qwen3: an RMSNorm over each head's query and key (q_norm, k_norm, weights [head_dim]) before RoPE. */
  readonly qkNorm: boolean;
  readonly hiddenAct: 'silu';
  /** Std of the normal initialiser for models trained from scratch (HF default 0.02). */
  readonly initializerRange: number;
  readonly bosTokenId: number | null;
  /** HF allows one id or a list; kept as a list. */
  readonly eosTokenIds: readonly number[];
}

/** HF class defaults where config.json may omit a field; the size fields are required instead. */
const MAX_POSITIONS: Readonly<Record<ModelType, number>> = { qwen2: 32768, qwen3: 32768, llama: 2048 };

/** Parses and validates a config.json object (or its text); every error names the offending field. */
export function parseModelConfig(json: unknown): ModelConfig {
  const raw = typeof json === 'string' ? parseText(json) : json;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new ConfigError('config.json', 'is not an object');
  const f = new Fields(raw as Record<string, unknown>);
  const modelType = f.modelType();
  checkKnownKeys(raw as Record<string, unknown>, modelType);
  const numHeads = f.int('num_attention_heads');
  const hiddenSize = f.int('hidden_size');
  const numKvHeads = f.int('num_key_value_heads', numHeads);
  if (numHeads % numKvHeads !== 0) {
    throw new ConfigError('num_key_value_heads', `${numKvHeads} does not divide num_attention_heads ${numHeads}`);
  }
  const headDim = f.optionalInt('head_dim') ?? derivedHeadDim(hiddenSize, numHeads);
  if (headDim % 2 !== 0) throw new ConfigError('head_dim', `${headDim} must be even for rotary embeddings`);
  f.unsupported();
  const rope = parseRope(raw as Record<string, unknown>, headDim);
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
    ropeTheta: rope.theta,
    ropeScaling: rope.scaling,
    maxPositionEmbeddings: f.int('max_position_embeddings', MAX_POSITIONS[modelType]),
    tieWordEmbeddings: f.bool('tie_word_embeddings', false),
    attentionBias: f.attentionBias(modelType),
    qkNorm: modelType === 'qwen3',
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
    if (!MODEL_TYPES.includes(v as ModelType)) {
      throw new ConfigError('model_type', `${JSON.stringify(v)} is not one of ${MODEL_TYPES.join(', ')}`);
    }
    const archs = this.raw.architectures;
    if (archs != null && (!Array.isArray(archs) || archs.some((a) => a !== ARCHITECTURES[v as ModelType]))) {
      throw new ConfigError(
        'architectures',
        `${JSON.stringify(archs)} is not [${JSON.stringify(ARCHITECTURES[v as ModelType])}]`,
      );
    }
    return v as ModelType;
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
    if (modelType !== 'qwen2' && declared === true) {
      throw new ConfigError('attention_bias', `${modelType} attention_bias also biases o_proj, which is not supported`);
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
    const r = this.raw;
    if (r.use_sliding_window === true) throw new ConfigError('use_sliding_window', 'is not supported');
    if (r.mlp_bias === true) throw new ConfigError('mlp_bias', 'is not supported');
    if (r.pretraining_tp != null && r.pretraining_tp !== 1) throw new ConfigError('pretraining_tp', 'must be 1');
    if (r.attention_dropout != null && r.attention_dropout !== 0)
      throw new ConfigError('attention_dropout', 'must be 0 (starpo trains without dropout)');
    const types = r.layer_types;
    if (types != null && (!Array.isArray(types) || types.some((t) => t !== 'full_attention')))
      throw new ConfigError('layer_types', 'only full_attention layers are supported');
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
    ...writeRope(config.ropeTheta, config.ropeScaling),
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
  if (config.modelType !== 'llama') json.use_sliding_window = false;
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
    out.push({ name: `${p}.self_attn.o_proj.weight`, shape: [D, q] });
    if (config.qkNorm) {
      out.push(
        { name: `${p}.self_attn.q_norm.weight`, shape: [headDim] },
        { name: `${p}.self_attn.k_norm.weight`, shape: [headDim] },
      );
    }
    out.push(
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
