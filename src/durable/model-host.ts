/**
 * The models one worker process holds for its activities: policy engines (worker threads, so the event
 * loop stays free for heartbeats and Kafka) holding one checkpoint at a time. Consecutive activities at
 * the same checkpoint (score then update; the shards of one rollout) skip the download. Users take
 * turns (one at a time), because loading another checkpoint would change the weights under a caller.
 */
import { PolicyEngine } from '../policy/engine/engine.ts';
import type { Provider } from '../policy/engine/session.ts';
import type { RlConfig } from '../rl/config.ts';
import type { ModelName, TrainerState } from '../rl/run-checkpoint.ts';
import { type RunModel, pretrainedStates, resolveRunModel } from '../rl/run-model.ts';
import type { CheckpointId, CheckpointStore } from '../storage/index.ts';
import { type Engines, loadEngineCheckpoint } from './engine-checkpoint.ts';

export interface HeldModels {
  actor: PolicyEngine;
  critic: PolicyEngine | null;
  ref: PolicyEngine | null;
  /** The models by checkpoint file prefix (what save and load iterate over). */
  engines: Engines;
  /** trainer.json of the held checkpoint; null for a fresh initialisation. */
  trainer: TrainerState | null;
}

/** Lets a user say that it changes the weights, and which checkpoint they equal afterwards. */
export interface HostSession {
  mutating(): void;
  holds(id: CheckpointId, trainer: TrainerState): void;
}

const label = (storeUri: string, id: CheckpointId): string => `${storeUri}|${id.runId}/${id.lineageId}@${id.iteration}`;

export class ModelHost {
  private models: HeldModels | null = null;
  private signature = '';
  private held: string | null = null;
  private turn: Promise<unknown> = Promise.resolve();

  /**
   * `roles`: 'actor' for rollout workers; 'all' loads the critic and reference too (update workers).
   * `provider` overrides the run config's (rolloutProvider for 'actor', updateProvider for 'all').
   */
  constructor(private readonly roles: 'actor' | 'all', private readonly provider?: Provider) {}

  /** The provider this host's engines run on for a run: the worker's override, else the run's setting for this role. */
  providerFor(c: RlConfig): Provider {
    return this.provider ?? (this.roles === 'all' ? c.updateProvider : c.rolloutProvider);
  }

  /** Runs `fn` with the models at checkpoint `from` ('fresh': the seeded initialisation of `c`). */
  use<T>(c: RlConfig, store: { uri: string; store: CheckpointStore }, from: CheckpointId | 'fresh',
    fn: (m: HeldModels, session: HostSession) => Promise<T>): Promise<T> {
    const run = this.turn.then(() => this.run(c, store, from, fn));
    this.turn = run.catch(() => undefined);
    return run;
  }

  private async run<T>(c: RlConfig, store: { uri: string; store: CheckpointStore }, from: CheckpointId | 'fresh',
    fn: (m: HeldModels, session: HostSession) => Promise<T>): Promise<T> {
    const models = await this.engines(c, from === 'fresh');
    const wanted = from === 'fresh' ? null : label(store.uri, from);
    if (from !== 'fresh' && this.held !== wanted) {
      this.held = null;
      models.trainer = await loadEngineCheckpoint(store.store, from, models.engines, (await resolveRunModel(c)).assets);
      this.held = wanted;
    }
    const session: HostSession = {
      mutating: () => { this.held = null; },
      holds: (id, trainer) => { this.held = label(store.uri, id); models.trainer = trainer; },
    };
    try {
      return await fn(models, session);
    } catch (err) {
      // A dead engine thread cannot be reused: start over on the next call.
      if ((err as Error).message?.startsWith('policy engine worker')) await this.close();
      throw err;
    }
  }

  /**
   * The engines for this config; new ones when the shape changes or a fresh start is asked for: seeded, or
   * holding a pretrained run's starting weights.
   */
  private async engines(c: RlConfig, fresh: boolean): Promise<HeldModels> {
    const run = await resolveRunModel(c);
    const config = run.modelConfig;
    const threads = c.threads > 0 ? c.threads : undefined;
    const all = this.roles === 'all';
    const provider = this.providerFor(c);
    const kvCacheBytes = c.kvCacheMb * 2 ** 20;
    const signature = JSON.stringify({
      config, threads, provider, critic: all && c.critic, ref: all && c.klCoef > 0, seed: c.seed, lora: run.lora, kvCacheBytes,
    });
    if (this.models && this.signature === signature && !fresh) return this.models;
    await this.close();
    const start = (role: 'actor' | 'critic', seed: number) => PolicyEngine.start({
      config, role, seed, threads, provider, tokenizerFiles: role === 'actor' ? run.assets : undefined,
      lora: run.lora ?? undefined, kvCacheBytes: role === 'actor' ? kvCacheBytes : undefined,
    });
    // The seeds of rl/models.ts createModels, so a fresh start is the embedded driver's initialisation.
    const [actor, critic, ref] = await Promise.all([
      start('actor', c.seed),
      all && c.critic ? start('critic', c.seed + 1) : null,
      all && c.klCoef > 0 ? start('actor', c.seed) : null,
    ]);
    const engines: Engines = { actor, ...(critic && { critic }), ...(ref && { ref }) };
    await loadPretrainedEngines(engines, run, c, fresh);
    this.models = { actor, critic, ref, engines, trainer: null };
    this.signature = signature;
    return this.models;
  }

  async close(): Promise<void> {
    const m = this.models;
    this.models = null;
    this.held = null;
    if (m) await Promise.all(Object.values(m.engines).map((e) => e.close().catch(() => undefined)));
  }
}

export type { ModelName };

/** The embedded driver's loadPretrained, for engines: a LoRA base always, a full model's weights when fresh. */
async function loadPretrainedEngines(engines: Engines, run: RunModel, c: RlConfig, fresh: boolean): Promise<void> {
  if (!run.pretrained || (!run.lora && !fresh)) return;
  const names = Object.keys(engines) as ModelName[];
  if (run.lora) {
    const base = await run.pretrained.readWeights();
    await Promise.all(names.map((name) => engines[name]!.setBase(base)));
    return;
  }
  const states = await pretrainedStates(run, c.seed + 1);
  await Promise.all(names.map((name) => engines[name]!.setState(states[name], { allowMissing: [] })));
}
