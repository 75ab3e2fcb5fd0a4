import { type ModelConfig, parseModelConfig } from '../../../src/policy/io/config.ts';

/**
 * The 2-layer, width-64 decoder several engine tests run (vocabulary 300, 4 query and 2 key/value heads of 16): big
 * enough for a prompt of tens of tokens and blocks of 32 inputs, small enough to train in milliseconds.
 */
export function tinyConfig(modelType: 'qwen2' | 'qwen3', initializerRange: number): ModelConfig {
  return parseModelConfig({
    model_type: modelType,
    vocab_size: 300,
    hidden_size: 64,
    intermediate_size: 128,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    head_dim: 16,
    initializer_range: initializerRange,
  });
}
