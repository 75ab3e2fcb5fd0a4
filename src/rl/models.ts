import { parseModelConfig, type ModelConfig } from '../policy/io/config.ts';
import { Policy } from '../policy/engine/policy.ts';
import type { Tokenizer } from '../policy/tokenizer/types.ts';
import type { RlConfig } from './config.ts';
import type { IterationModels } from './iteration.ts';

/** The HF-layout config of a model trained from scratch, sized by the run config (Llama family: no biases). */
export function scratchModelConfig(c: RlConfig, tokenizer: Tokenizer): ModelConfig {
  return parseModelConfig({
    model_type: 'llama', vocab_size: tokenizer.vocabSize, hidden_size: c.modelHidden, intermediate_size: c.modelFfn,
    num_hidden_layers: c.modelLayers, num_attention_heads: c.modelHeads, num_key_value_heads: c.modelKvHeads,
    max_position_embeddings: c.modelContext, rms_norm_eps: 1e-6, rope_theta: 10000, tie_word_embeddings: true,
    hidden_act: 'silu', eos_token_id: tokenizer.eosId, pad_token_id: tokenizer.padId,
  });
}

/** Actor, critic (separate weights, same architecture) and frozen reference, as the config asks. */
export function createModels(c: RlConfig, config: ModelConfig, tokenizer: Tokenizer): IterationModels {
  const threads = c.threads > 0 ? c.threads : undefined;
  const actor = new Policy({ config, role: 'actor', seed: c.seed, threads, tokenizer });
  const critic = c.critic ? new Policy({ config, role: 'critic', seed: c.seed + 1, threads, tokenizer }) : null;
  const ref = c.klCoef > 0 ? new Policy({ config, role: 'actor', seed: c.seed, threads, tokenizer }) : null;
  return { actor, critic, ref };
}

export async function closeModels(m: IterationModels): Promise<void> {
  await Promise.all([m.actor.close(), m.critic?.close(), m.ref?.close()]);
}
