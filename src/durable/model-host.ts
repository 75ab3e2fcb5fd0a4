/**
 * The models one worker process holds for its activities: policy engines (worker threads, so the event
 * loop stays free for heartbeats and Kafka) holding one checkpoint at a time. Consecutive activities at
 * the same checkpoint (score then update; the shards of one rollout) skip the download. Users take
 * turns (one at a time), because loading another checkpoint would change the weights under a caller.
 */
import type { PolicyEngine } from '../policy/engine/engine.ts';
import type { Provider } from '../policy/engine/session.ts';
import type { RlConfig } from '../rl/config.ts';
import { loadPretrained, modelInits, namedModels, startEngineModels } from '../run/models.ts';
import { loadRunCheckpoint, type ModelName, type TrainerState } from '../run/checkpoint.ts';
import { resolveRunModel } from '../rl/run-model.ts';
import type { CheckpointId, CheckpointStore } from '../storage/index.ts';

export interface HeldModels {
  actor: PolicyEngine;
  critic: PolicyEngine | null;
  ref: PolicyEngine | null;
  /** The models by checkpoint file prefix (what save and load iterate over). */
  engines: Partial<Record<ModelName, PolicyEngine>>;
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
  constructor(
    private readonly roles: 'actor' | 'all',
    private readonly provider?: Provider,
  ) {}

  /** The provider this host's engines run on for a run: the worker's override, else the run's setting for this role. */
  providerFor(c: RlConfig): Provider {
    return this.provider ?? (this.roles === 'all' ? c.updateProvider : c.rolloutProvider);
  }

  /** Runs `fn` with the models at checkpoint `from` ('fresh': the seeded initialisation of `c`). */
  use<T>(
    c: RlConfig,
    store: { uri: string; store: CheckpointStore },
    from: CheckpointId | 'fresh',
    fn: (m: HeldModels, session: HostSession) => Promise<T>,
  ): Promise<T> {
    const run = this.turn.then(() => this.run(c, store, from, fn));
    this.turn = run.catch(() => undefined);
    return run;
  }

  private async run<T>(
    c: RlConfig,
    store: { uri: string; store: CheckpointStore },
    from: CheckpointId | 'fresh',
    fn: (m: HeldModels, session: HostSession) => Promise<T>,
  ): Promise<T> {
    const models = await this.engines(c, from === 'fresh');
    const wanted = from === 'fresh' ? null : label(store.uri, from);
    if (from !== 'fresh' && this.held !== wanted) {
      this.held = null;
      models.trainer = await loadRunCheckpoint(store.store, from, models.engines, (await resolveRunModel(c)).assets);
      this.held = wanted;
    }
    const session: HostSession = {
      mutating: () => {
        this.held = null;
      },
      holds: (id, trainer) => {
        this.held = label(store.uri, id);
        models.trainer = trainer;
      },
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
    const provider = this.providerFor(c);
    const signature = JSON.stringify(modelInits(c, run.modelConfig, provider, this.roles));
    if (this.models && this.signature === signature && !fresh) return this.models;
    await this.close();
    const models = await startEngineModels(c, run, provider, this.roles);
    await loadPretrained(models, run, c, fresh);
    this.models = { ...models, engines: namedModels(models), trainer: null };
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
