/**
 * A run's models as in-process Policies or as PolicyEngines (the same Policy in a worker thread, computing
 * the same numbers): reading and setting their state either way, and starting the engines. The embedded
 * driver trains in-process, except in an asynchronous run, whose trainer must leave the main thread free
 * for the rollout beside it (session.run blocks the thread it runs on); checkpoints hold the same bytes.
 */
import { PolicyEngine } from '../policy/engine/engine.ts';
import type { Policy } from '../policy/engine/policy.ts';
import { exportState, importState, type PolicyState } from '../policy/engine/state.ts';
import type { Tensor } from '../policy/io/dtype.ts';
import type { RlConfig } from './config.ts';
import type { IterationModels } from './iteration.ts';
import { embeddedProvider } from './models.ts';
import type { RunModel } from './run-model.ts';

export type AnyPolicy = Policy | PolicyEngine;

/** A copy of the model's weights (and AdamW moments and step when `optimizer`). */
export function getPolicyState(m: AnyPolicy, optimizer: boolean): Promise<PolicyState> {
  return m instanceof PolicyEngine ? m.getState(optimizer) : Promise.resolve(exportState(m, optimizer));
}

/** Sets weights (and moments and step) as importState does; every parameter must be present. */
export async function setPolicyState(m: AnyPolicy, state: PolicyState): Promise<void> {
  if (m instanceof PolicyEngine) await m.setState(state, { allowMissing: [] });
  else importState(m, state, { allowMissing: [] });
}

/** LoRA: the frozen base. */
export async function setPolicyBase(m: AnyPolicy, weights: ReadonlyMap<string, Tensor>): Promise<void> {
  if (m instanceof PolicyEngine) await m.setBase(weights);
  else m.setBase(weights);
}

/**
 * The models of rl/models.ts createModels (same roles, seeds, threads, provider, cache), each in a worker
 * thread; typed as Policies, whose score, trainStep, generate and close they mirror call for call.
 */
export async function startEngineModels(c: RlConfig, run: RunModel): Promise<IterationModels> {
  const threads = c.threads > 0 ? c.threads : undefined;
  const provider = embeddedProvider(c);
  const lora = run.lora ?? undefined;
  const start = (role: 'actor' | 'critic', seed: number, sampler: boolean) => PolicyEngine.start({
    config: run.modelConfig, role, seed, threads, provider, lora, tokenizerFiles: sampler ? run.assets : undefined,
    kvCacheBytes: sampler ? c.kvCacheMb * 2 ** 20 : undefined,
  }) as unknown as Promise<Policy>;
  const [actor, critic, ref] = await Promise.all([
    start('actor', c.seed, true), c.critic ? start('critic', c.seed + 1, false) : null, c.klCoef > 0 ? start('actor', c.seed, false) : null,
  ]);
  return { actor, critic, ref };
}

/** After a warm-start: RL starts with fresh optimizer moments, and the KL reference is the warm-started policy. */
export async function startFromWarmStart(m: IterationModels): Promise<void> {
  if (!(m.actor instanceof PolicyEngine)) {
    m.actor.setMoments(null, 0);
    m.ref?.setParams(m.actor.getParams());
    return;
  }
  const { weights } = await getPolicyState(m.actor, false);
  await setPolicyState(m.actor, { weights, optimizer: null, step: 0 });
  if (m.ref) await setPolicyState(m.ref, { weights, optimizer: null, step: 0 });
}
