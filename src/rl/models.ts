import type { ModelConfig } from '../policy/io/config.ts';
import { Policy } from '../policy/engine/policy.ts';
import type { Tokenizer } from '../policy/tokenizer/types.ts';
import type { RlConfig } from './config.ts';
import { importState } from '../policy/engine/state.ts';
import type { IterationModels } from './iteration.ts';
import { type RunModel, pretrainedStates } from './run-model.ts';

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

/** Loads a pretrained run's starting state (see pretrainedStates) into fresh models. */
export async function loadPretrained(m: IterationModels, run: RunModel, c: RlConfig): Promise<void> {
  const states = await pretrainedStates(run, c.seed + 1);
  for (const name of ['actor', 'critic', 'ref'] as const) {
    const policy = m[name];
    if (policy) importState(policy, states[name], { allowMissing: [] });
  }
}
