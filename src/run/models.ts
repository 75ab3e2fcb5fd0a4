/**
 * A run's models, one definition for every driver: which models a run has, each one's role and seed, and
 * how it starts (in-process Policies, or PolicyEngines in worker threads computing the same numbers).
 */
import type { ModelConfig } from '../policy/io/config.ts';
import { PolicyEngine } from '../policy/engine/engine.ts';
import type { PolicyHandle } from '../policy/engine/handle.ts';
import { Policy } from '../policy/engine/policy.ts';
import type { EngineInit } from '../policy/engine/protocol.ts';
import type { Role } from '../policy/model/layout.ts';
import { type Provider, probeProvider } from '../policy/engine/session.ts';
import { ConfigError } from '../errors.ts';
import type { Tokenizer } from '../policy/tokenizer/types.ts';
import { hasReferenceModel, type RlConfig } from '../rl/config.ts';
import type { IterationModels } from '../rl/stages/models.ts';
import type { ModelName } from './checkpoint.ts';
import { type RunModel, loraOf, pretrainedStates } from '../rl/run-model.ts';

/** One model of a run, as either kind starts it; `samples`: it generates (the actor: tokenizer and KV cache). */
export interface ModelInit {
  readonly name: ModelName;
  readonly options: Omit<EngineInit, 'tokenizerFiles'>;
  readonly samples: boolean;
}

/** The run's packPrefixes as the policies take it: `auto` leaves it to each policy's size. */
export const packPrefixesOption = (c: RlConfig): boolean | undefined =>
  c.packPrefixes === 'auto' ? undefined : c.packPrefixes === 'on';

/**
 * Actor (the run's seed), critic (separate weights, same architecture, seed + 1) and frozen reference (the
 * actor's seed, so it starts equal to the actor), as the config asks. With LoRA all three are LoRA policies on
 * the same base (the reference's adapters are the actor's at the start). `roles` 'actor': the actor only.
 */
export function modelInits(
  c: RlConfig,
  config: ModelConfig,
  provider: Provider,
  roles: 'actor' | 'all' = 'all',
): ModelInit[] {
  const base = {
    config,
    threads: c.threads > 0 ? c.threads : undefined,
    provider,
    lora: loraOf(c) ?? undefined,
    packPrefixes: packPrefixesOption(c),
  };
  const all = roles === 'all';
  const kvCacheBytes = c.kvCacheMb * 2 ** 20;
  const model = (name: ModelName, role: Role, seed: number, samples = false): ModelInit => ({
    name,
    samples,
    options: { ...base, role, seed, ...(samples && { kvCacheBytes, rolloutWeights: c.rolloutWeights }) },
  });
  const inits = [model('actor', 'actor', c.seed, true)];
  if (all && c.critic) inits.push(model('critic', 'critic', c.seed + 1));
  if (all && hasReferenceModel(c)) inits.push(model('ref', 'actor', c.seed));
  return inits;
}

function collect<P extends PolicyHandle>(inits: readonly ModelInit[], made: readonly P[]): IterationModels<P> {
  const of = (name: ModelName): P | null => made[inits.findIndex((i) => i.name === name)] ?? null;
  return { actor: of('actor')!, critic: of('critic'), ref: of('ref') };
}

/** The run's models in-process, on the embedded driver's one provider. */
export function createModels(c: RlConfig, config: ModelConfig, tokenizer: Tokenizer): IterationModels<Policy> {
  const inits = modelInits(c, config, embeddedProvider(c));
  return collect(
    inits,
    inits.map((i) => new Policy({ ...i.options, tokenizer: i.samples ? tokenizer : undefined })),
  );
}

/**
 * The run's actor alone, in-process, to sample outside training (eval, the gateway): the same options as a
 * run's actor (LoRA, threads, the KV cache kept across turns), on the CPU: a checkpoint trained on a GPU must
 * stay usable on any machine, and neither command can override the provider the run's config names.
 */
export function createActor(c: RlConfig, run: RunModel): Policy {
  const [actor] = modelInits(c, run.modelConfig, 'cpu', 'actor');
  return new Policy({ ...actor!.options, tokenizer: run.tokenizer });
}

/** The same models, each in a worker thread (started side by side). */
export async function startEngineModels(
  c: RlConfig,
  run: RunModel,
  provider = embeddedProvider(c),
  roles: 'actor' | 'all' = 'all',
): Promise<IterationModels<PolicyEngine>> {
  const inits = modelInits(c, run.modelConfig, provider, roles);
  const start = (i: ModelInit) =>
    PolicyEngine.start({ ...i.options, tokenizerFiles: i.samples ? run.assets : undefined });
  const made = await Promise.all(inits.map(start));
  return collect(inits, made);
}

/** The models present, by checkpoint file prefix (what checkpoints save and load). */
export function namedModels<P extends PolicyHandle>(m: IterationModels<P>): Partial<Record<ModelName, P>> {
  return { actor: m.actor, ...(m.critic && { critic: m.critic }), ...(m.ref && { ref: m.ref }) };
}

/**
 * The one provider of an in-process run: its actor both samples and trains, so rollouts and updates cannot
 * run on different providers (the durable driver's workers can).
 */
export function embeddedProvider(c: RlConfig): Provider {
  if (c.rolloutProvider !== c.updateProvider) {
    throw new ConfigError(
      'rolloutProvider',
      `is ${c.rolloutProvider} but updateProvider is ${c.updateProvider}: the embedded driver ` +
        'samples and trains one actor, so both must be equal (split them with --durable)',
    );
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
  const models = Object.entries(namedModels(m)) as [ModelName, PolicyHandle][];
  if (run.lora) {
    const base = await run.pretrained.readWeights();
    await Promise.all(models.map(async ([, model]) => model.setBase(base)));
    return;
  }
  const states = await pretrainedStates(run, c.seed + 1);
  await Promise.all(models.map(([name, model]) => model.setState(states[name], { allowMissing: [] })));
}
