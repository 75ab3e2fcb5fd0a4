/**
 * Which config.json keys starpo understands. HF configs carry many keys; each one here is either read by
 * config.ts (and validated there) or known not to change the forward pass (metadata, generation defaults,
 * training-only switches checked to be off). Any other key is refused by name: an unknown key may be a
 * feature (quantization_config, auto_map's remote code, a new attention variant) that would make the
 * numbers silently differ from the model's.
 */
import { ConfigError } from '../../errors.ts';

export const MODEL_TYPES = ['qwen2', 'qwen3', 'llama'] as const;
export type ModelType = (typeof MODEL_TYPES)[number];

export const ARCHITECTURES: Readonly<Record<ModelType, string>> = {
  qwen2: 'Qwen2ForCausalLM',
  qwen3: 'Qwen3ForCausalLM',
  llama: 'LlamaForCausalLM',
};

/** Read and validated by config.ts / rope-scaling.ts. */
const READ = [
  'model_type',
  'architectures',
  'vocab_size',
  'hidden_size',
  'intermediate_size',
  'num_hidden_layers',
  'num_attention_heads',
  'num_key_value_heads',
  'head_dim',
  'rms_norm_eps',
  'rope_theta',
  'rope_scaling',
  'rope_parameters',
  'max_position_embeddings',
  'tie_word_embeddings',
  'attention_bias',
  'hidden_act',
  'initializer_range',
  'bos_token_id',
  'eos_token_id',
  'use_sliding_window',
  'mlp_bias',
  'pretraining_tp',
  'attention_dropout',
  'layer_types',
];

/**
 * No effect on the forward pass: bookkeeping, storage dtype (weights are widened to float32 on load),
 * generation and output switches, and sliding-window sizes that only matter when use_sliding_window is on
 * (which config.ts refuses).
 */
const HARMLESS = [
  'transformers_version',
  'torch_dtype',
  'dtype',
  '_name_or_path',
  // transformers 5 writes this where 4.x wrote _name_or_path (bookkeeping: where the model was loaded from).
  '_model_name_or_path',
  'use_cache',
  'pad_token_id',
  'sliding_window',
  'max_window_layers',
  'tokenizer_class',
  'output_attentions',
  'output_hidden_states',
  'return_dict',
  'use_return_dict',
  'torchscript',
  'is_encoder_decoder',
  'is_decoder',
  'add_cross_attention',
  'tie_encoder_decoder',
  'chunk_size_feed_forward',
  'problem_type',
  'id2label',
  'label2id',
  'finetuning_task',
  'task_specific_params',
  'prefix',
  'sep_token_id',
  // The tokenizer's own files state the unknown token; the forward pass never reads it.
  'unk_token_id',
  'decoder_start_token_id',
  'cross_attention_hidden_size',
  'pruned_heads',
  'model_max_length',
  'use_bfloat16',
  'tf_legacy_loss',
  'keys_to_ignore_at_inference',
  // Generation defaults that older transformers versions wrote into config.json (generation_config.json now).
  'max_length',
  'min_length',
  'do_sample',
  'early_stopping',
  'num_beams',
  'num_beam_groups',
  'diversity_penalty',
  'temperature',
  'top_k',
  'top_p',
  'typical_p',
  'repetition_penalty',
  'length_penalty',
  'no_repeat_ngram_size',
  'encoder_no_repeat_ngram_size',
  'bad_words_ids',
  'num_return_sequences',
  'output_scores',
  'return_dict_in_generate',
  'forced_bos_token_id',
  'forced_eos_token_id',
  'remove_invalid_values',
  'exponential_decay_length_penalty',
  'suppress_tokens',
  'begin_suppress_tokens',
];

const KNOWN = new Set([...READ, ...HARMLESS]);

/** Throws for the first key (in file order) that starpo neither reads nor knows to be harmless. */
export function checkKnownKeys(raw: Readonly<Record<string, unknown>>, modelType: ModelType): void {
  for (const key of Object.keys(raw)) {
    if (!Object.hasOwn(raw, key) || KNOWN.has(key)) continue;
    throw new ConfigError(
      key,
      `is not understood by starpo for ${modelType} models (remove it only if it does not change the model's numerics)`,
    );
  }
}
