/**
 * The rollouts of an asynchronous embedded run (asyncStaleness k ≥ 1). A second actor in a worker thread
 * (PolicyEngine, so its generation runs beside the trainer's in-process score and update) plays iteration
 * i with policy version v(i) = max(0, i − 1 − k) (async-schedule.ts). The trainer publishes version i after
 * update i; each rollout starts as soon as its version is published and the rollout before it is done, one
 * at a time in iteration order, and the trainer takes them in that order. What a rollout plays depends on
 * (config, iteration, version weights) only, never on when it ran.
 */
import { performance } from 'node:perf_hooks';
import type { PolicyEngine } from '../policy/engine/engine.ts';
import type { PolicyState } from '../policy/engine/state.ts';
import type { TurnGenerator } from '../tools/rollout-hook.ts';
import type { CheckpointStore } from '../storage/index.ts';
import { behaviourVersion, pendingCheckpoints } from '../rl/async-schedule.ts';
import type { RlConfig } from '../rl/config.ts';
import { type SampledGroups } from '../rl/stages/rollout.ts';
import { sampleGroups } from '../rl/stages/rollout.ts';
import { loadPretrained, startEngineModels } from '../run/models.ts';
import type { PolicyHandle } from '../policy/engine/handle.ts';
import { type CheckpointRef, loadActorState } from '../run/checkpoint.ts';
import type { RunModel } from '../rl/run-model.ts';
import { episodeSource } from '../gateway/agent-rollout.ts';

export class AsyncRollouts {
  private readonly versions = new Map<number, PolicyState>();
  private readonly results = new Map<number, Promise<SampledGroups>>();
  /** Milliseconds each rollout spent playing (beside the trainer's wait for it, the `rollout` timing). */
  readonly playedMs = new Map<number, number>();
  private chain: Promise<unknown> = Promise.resolve();
  private loaded = -1;

  private constructor(
    private readonly c: RlConfig,
    private readonly engine: PolicyEngine,
    private readonly run: RunModel,
    private readonly tools: TurnGenerator | undefined,
    private next: number,
    private readonly last: number,
  ) {}

  /** A rollout engine for iterations `first` … `last` (no rollout starts before its version is published). */
  static async start(
    c: RlConfig,
    run: RunModel,
    tools: TurnGenerator | undefined,
    first: number,
    last: number,
  ): Promise<AsyncRollouts> {
    const models = await startEngineModels(c, run, undefined, 'actor');
    await loadPretrained(models, run, c, false); // a LoRA base; the weights come with each published version
    return new AsyncRollouts(c, models.actor, run, tools, first, last);
  }

  /** Version v (the actor after update v, or the starting policy) is ready: starts the rollouts it unblocks. */
  publish(version: number, state: PolicyState): void {
    this.versions.set(version, state);
    const versionOf = (i: number) => behaviourVersion(this.c.asyncStaleness, i);
    while (this.next <= this.last && this.versions.has(versionOf(this.next))) {
      const i = this.next++;
      const v = versionOf(i);
      const played = this.chain.then(() => this.play(i, v));
      this.chain = played.catch(() => undefined); // the error surfaces in take(i)
      this.results.set(i, played);
    }
  }

  /** Iteration i's rollout (scheduled by the publish of its version). */
  take(i: number): Promise<SampledGroups> {
    const played = this.results.get(i);
    if (!played)
      throw new Error(
        `no rollout scheduled for iteration ${i}: version ${behaviourVersion(this.c.asyncStaleness, i)} unpublished`,
      );
    this.results.delete(i);
    return played;
  }

  private async play(i: number, v: number): Promise<SampledGroups> {
    const t0 = performance.now();
    if (this.loaded !== v) await this.engine.setState(this.versions.get(v)!, { allowMissing: [] });
    this.loaded = v;
    // later rollouts play newer ones
    for (const older of this.versions.keys()) if (older < v) this.versions.delete(older);
    const sampled = await sampleGroups(this.c, i, episodeSource(this.c, this.engine, this.run, this.tools));
    this.playedMs.set(i, performance.now() - t0);
    return sampled;
  }

  /** Waits for the rollout under way (one the trainer will not take is dropped) and ends the engine. */
  async close(): Promise<void> {
    await this.chain;
    await this.engine.close();
  }
}

/**
 * Where each policy version lives: the checkpoints of this lineage, and those a resumed run's checkpoint named.
 * Every checkpoint of an asynchronous run names the older versions the rollouts after it play (pendingAt).
 */
export class VersionCheckpoints {
  private readonly refs = new Map<number, CheckpointRef>();

  constructor(private readonly c: RlConfig) {}

  add(...refs: CheckpointRef[]): void {
    for (const ref of refs) this.refs.set(ref.iteration, ref);
  }

  /** TrainerState.behaviourPolicies of checkpoint i: undefined when none is pending (always, on-policy). */
  pendingAt(i: number): CheckpointRef[] | undefined {
    return pendingCheckpoints(this.c.asyncStaleness, i, this.refs);
  }
}

/**
 * The rollouts of an asynchronous run starting after checkpoint `done` (null on-policy): the older versions
 * that checkpoint names are read from the store, version `done` is the actor's current weights.
 */
export async function openAsyncRollouts(
  c: RlConfig,
  run: RunModel,
  tools: TurnGenerator | undefined,
  from: { store: CheckpointStore; runId: string; versions: VersionCheckpoints; done: number; actor: PolicyHandle },
  last: number,
): Promise<AsyncRollouts | null> {
  if (c.asyncStaleness === 0) return null;
  const rollouts = await AsyncRollouts.start(c, run, tools, from.done + 1, last);
  for (const ref of from.versions.pendingAt(from.done) ?? []) {
    rollouts.publish(ref.iteration, await loadActorState(from.store, { runId: from.runId, ...ref }, run.assets));
  }
  rollouts.publish(from.done, await from.actor.getState(false));
  return rollouts;
}
