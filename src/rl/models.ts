import type { ModelConfig } from '../policy/io/config.ts';
import { Policy } from '../policy/engine/policy.ts';
import { type Provider, probeProvider } from '../policy/engine/session.ts';
import { ConfigError } from '../errors.ts';
import type { Tokenizer } from '../policy/tokenizer/types.ts';
import type { RlConfig } from './config.ts';
import type { IterationModels } from './iteration.ts';
import { type RunModel, loraOf, pretrainedStates } from './run-model.ts';

/**
 * Actor, critic (separate weights, same architecture) and frozen reference, as the config asks. With LoRA
 * all three are LoRA policies on the same base (the reference's adapters are the actor's at the start).
 */
export function createModels(c: RlConfig, config: ModelConfig, tokenizer: Tokenizer): IterationModels<Policy> {
  const threads = c.threads > 0 ? c.threads : undefined;
  const lora = loraOf(c) ?? undefined;
  const provider = embeddedProvider(c);
  const actor = new Policy({ config, role: 'actor', seed: c.seed, threads, tokenizer, lora, provider, kvCacheBytes: c.kvCacheMb * 2 ** 20 });
  const critic = c.critic ? new Policy({ config, role: 'critic', seed: c.seed + 1, threads, tokenizer, lora, provider }) : null;
  const ref = c.klCoef > 0 ? new Policy({ config, role: 'actor', seed: c.seed, threads, tokenizer, lora, provider }) : null;
  return { actor, critic, ref };
}

/**
 * The one provider of an in-process run: its actor both samples and trains, so rollouts and updates cannot
 * run on different providers (the durable driver's workers can).
 */
export function embeddedProvider(c: RlConfig): Provider {
  if (c.rolloutProvider !== c.updateProvider) {
    throw new ConfigError('rolloutProvider', `is ${c.rolloutProvider} but updateProvider is ${c.updateProvider}: the embedded driver ` +
      'samples and trains one actor, so both must be equal (split them with --durable)');
  }
  return c.updateProvider;
}

/** Fails (one line) when this machine cannot run a session on the run's provider, before the run writes anything. */
export async function checkEmbeddedProvider(c: RlConfig): Promise<void> {
  const provider = embeddedProvider(c);
  if (provider !== 'cpu') await probeProvider(provider);
}

export async function closeModels(m: IterationModels): Promise<void> {
  await Promise.all([m.actor.close(), m.critic?.close(), m.ref?.close()]);
}

/**
 * Gives new models their pretrained weights: with LoRA the frozen base (always: checkpoints hold only the
 * adapters); otherwise, for a fresh start, the starting state of pretrainedStates (a resumed run's weights
 * come from its checkpoint).
 */
export async function loadPretrained(m: IterationModels, run: RunModel, c: RlConfig, fresh: boolean): Promise<void> {
  if (!run.pretrained || (!run.lora && !fresh)) return;
  const policies = (['actor', 'critic', 'ref'] as const).flatMap((name) => (m[name] ? [[name, m[name]!] as const] : []));
  if (run.lora) {
    const base = await run.pretrained.readWeights();
    for (const [, policy] of policies) await policy.setBase(base);
    return;
  }
  const states = await pretrainedStates(run, c.seed + 1);
  for (const [name, policy] of policies) await policy.setState(states[name], { allowMissing: [] });
}
