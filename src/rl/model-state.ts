/**
 * A run's models as in-process Policies or as PolicyEngines (the same Policy in a worker thread, computing
 * the same numbers). The embedded driver trains in-process, except in an asynchronous run, whose trainer
 * must leave the main thread free for the rollout beside it (session.run blocks the thread it runs on);
 * checkpoints hold the same bytes.
 */
import { PolicyEngine } from '../policy/engine/engine.ts';
import type { RlConfig } from './config.ts';
import type { IterationModels } from './iteration.ts';
import { embeddedProvider } from './models.ts';
import type { RunModel } from './run-model.ts';

/** The models of rl/models.ts createModels (same roles, seeds, threads, provider, cache), each in a worker thread. */
export async function startEngineModels(c: RlConfig, run: RunModel): Promise<IterationModels<PolicyEngine>> {
  const threads = c.threads > 0 ? c.threads : undefined;
  const provider = embeddedProvider(c);
  const lora = run.lora ?? undefined;
  const start = (role: 'actor' | 'critic', seed: number, sampler: boolean) => PolicyEngine.start({
    config: run.modelConfig, role, seed, threads, provider, lora, tokenizerFiles: sampler ? run.assets : undefined,
    kvCacheBytes: sampler ? c.kvCacheMb * 2 ** 20 : undefined,
  });
  const [actor, critic, ref] = await Promise.all([
    start('actor', c.seed, true), c.critic ? start('critic', c.seed + 1, false) : null, c.klCoef > 0 ? start('actor', c.seed, false) : null,
  ]);
  return { actor, critic, ref };
}

/** After a warm-start: RL starts with fresh optimizer moments, and the KL reference is the warm-started policy. */
export async function startFromWarmStart(m: IterationModels): Promise<void> {
  const { weights } = await m.actor.getState(false);
  await m.actor.setState({ weights, optimizer: null, step: 0 }, { allowMissing: [] });
  await m.ref?.setState({ weights, optimizer: null, step: 0 }, { allowMissing: [] });
}
