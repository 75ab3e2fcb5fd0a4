/**
 * config.json of published models, as their authors released them: the shapes `bench scale`, the GPU
 * check and the config parser's tests build random-init models at. No weights come with them (none can
 * be downloaded here); the numbers are what fixes the architecture.
 */

/** Qwen/Qwen2.5-0.5B (and -Instruct): 494M parameters, tied embedding. */
export const QWEN25_05B_CONFIG: Readonly<Record<string, unknown>> = {
  architectures: ['Qwen2ForCausalLM'],
  attention_dropout: 0.0,
  bos_token_id: 151643,
  eos_token_id: 151643,
  hidden_act: 'silu',
  hidden_size: 896,
  initializer_range: 0.02,
  intermediate_size: 4864,
  max_position_embeddings: 32768,
  max_window_layers: 24,
  model_type: 'qwen2',
  num_attention_heads: 14,
  num_hidden_layers: 24,
  num_key_value_heads: 2,
  rms_norm_eps: 1e-6,
  rope_theta: 1000000.0,
  sliding_window: 32768,
  tie_word_embeddings: true,
  torch_dtype: 'bfloat16',
  transformers_version: '4.40.1',
  use_cache: true,
  use_sliding_window: false,
  vocab_size: 151936,
};

/** Qwen/Qwen3-0.6B: 596M parameters, head_dim 128 beside hidden 1024 / 16 heads, per-head q/k norms. */
export const QWEN3_06B_CONFIG: Readonly<Record<string, unknown>> = {
  architectures: ['Qwen3ForCausalLM'],
  attention_bias: false,
  attention_dropout: 0.0,
  bos_token_id: 151643,
  eos_token_id: 151645,
  head_dim: 128,
  hidden_act: 'silu',
  hidden_size: 1024,
  initializer_range: 0.02,
  intermediate_size: 3072,
  max_position_embeddings: 40960,
  max_window_layers: 28,
  model_type: 'qwen3',
  num_attention_heads: 16,
  num_hidden_layers: 28,
  num_key_value_heads: 8,
  rms_norm_eps: 1e-6,
  rope_scaling: null,
  rope_theta: 1000000,
  sliding_window: null,
  tie_word_embeddings: true,
  torch_dtype: 'bfloat16',
  transformers_version: '4.51.0',
  use_cache: true,
  use_sliding_window: false,
  vocab_size: 151936,
};
