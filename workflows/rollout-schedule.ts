/**
 * When the trainingRun workflow plays which rollout (src/rl/async-schedule.ts). On-policy (asyncStaleness 0)
 * iteration i's rollout starts when the iteration asks for it, with the policy of checkpoint i − 1 — the
 * commands of every earlier workflow version, so their histories replay unchanged. Asynchronous (k ≥ 1): a
 * rollout starts as soon as the checkpoint of its version is written (at the start, those the starting
 * checkpoints cover; then one per update), on the rollout queue beside the update queue's work; the
 * iteration waits for it only when it needs its trajectories. Which version plays which iteration follows
 * from the schedule alone; when an activity completes decides only when the next command is issued.
 */
import { behaviourVersion, pendingCheckpoints } from '../src/rl/async-schedule.ts';
import { sampleRounds } from '../src/rl/sampling-rounds.ts';
import {
  shardGroups,
  type Carry,
  type DurableOptions,
  type PlayedRollout,
  type RunPlan,
  type StageInput,
  type TrainingRunInput,
} from '../src/durable/protocol.ts';
import { type CheckpointRef } from '../src/run/checkpoint.ts';
import type { Stages } from './activities.ts';

/** Plays `groups` (the iteration's group numbers) as rollout shards; returns their artifact keys in group order. */
async function play(
  a: Stages,
  base: StageInput,
  o: DurableOptions,
  groups: number[],
  round: number,
): Promise<string[]> {
  const shards = await Promise.all(
    shardGroups(groups.length, o.rolloutShards).map((slots, shard) =>
      a.rollout.rolloutShard({
        ...base,
        round,
        shard,
        groups: slots.map((s) => groups[s]),
        chunkGroups: o.chunkGroups,
      }),
    ),
  );
  return shards.flatMap((s) => s.keys);
}

/** The iteration's groups, plus DAPO's extra rounds (new group numbers, hence new seeds) while the plan asks. */
async function sample(
  a: Stages,
  base: StageInput,
  o: DurableOptions,
  plan: RunPlan,
): Promise<{ rollout: string[]; sampling?: string }> {
  const rollout: string[] = [];
  const playRound = async (groups: number[], round: number) =>
    void rollout.push(...(await play(a, base, o, groups, round)));
  const last = await sampleRounds(plan, playRound, (tries) => a.update.planSampling({ ...base, rollout, tries }));
  return last ? { rollout, sampling: last.key } : { rollout };
}

/** Where a lineage run starts: its checkpoint, the older versions that checkpoint names, rollouts already played. */
export type ScheduleStart = Pick<Carry, 'policy' | 'nextIteration' | 'versions' | 'rollouts'>;

export class RolloutSchedule {
  /** The checkpoint of each policy version this run knows. */
  private readonly versions = new Map<number, CheckpointRef>();
  private readonly started = new Map<number, Promise<PlayedRollout>>();
  /** The first iteration whose rollout has not started. */
  private next: number;

  /**
   * `eager`: start each rollout as soon as its version is written (pipelined runs); asynchronous runs always
   * do. Otherwise a rollout starts when its iteration asks for it.
   */
  constructor(
    private readonly a: Stages,
    private readonly input: TrainingRunInput,
    private readonly plan: RunPlan,
    start: ScheduleStart,
    private readonly last: number,
    private readonly eager: boolean,
  ) {
    this.eager ||= this.staleness > 0;
    for (const ref of [...(start.versions ?? []), start.policy]) this.versions.set(ref.iteration, ref);
    this.next = start.nextIteration;
    for (const r of start.rollouts ?? []) {
      this.started.set(r.iteration, Promise.resolve(r));
      this.next = Math.max(this.next, r.iteration + 1);
    }
    this.startDue();
  }

  private get staleness(): number {
    return this.plan.asyncStaleness ?? 0;
  }

  /** Iteration i's rollout: started earlier (asynchronous runs), or now. */
  take(i: number): Promise<PlayedRollout> {
    const started = this.started.get(i);
    this.started.delete(i);
    return started ?? this.play(i);
  }

  /** Checkpoint `ref` is written; an asynchronous run starts the rollouts that play with it. */
  published(ref: CheckpointRef): void {
    this.versions.set(ref.iteration, ref);
    this.startDue();
  }

  /** The older versions checkpoint i names for the rollouts after it (asynchronous runs; else undefined). */
  pendingAt(i: number): CheckpointRef[] | undefined {
    return pendingCheckpoints(this.staleness, i, this.versions);
  }

  /** Before continue-as-new: waits for the rollouts under way; the versions and rollouts the next run needs. */
  async drain(nextIteration: number): Promise<Pick<Carry, 'versions' | 'rollouts'>> {
    if (!this.eager) return {};
    const rollouts = await Promise.all([...this.started.values()]);
    const oldest = nextIteration - 1 - this.staleness; // pendingAt and the rollouts not started need no older one
    return { versions: [...this.versions.values()].filter((r) => r.iteration >= oldest), rollouts };
  }

  private startDue(): void {
    if (!this.eager) return;
    while (this.next <= this.last && this.versions.has(behaviourVersion(this.staleness, this.next))) {
      const i = this.next++;
      const played = this.play(i);
      played.catch(() => undefined); // fails in take(i); one nobody takes (the run stopped) must not fail the workflow
      this.started.set(i, played);
    }
  }

  private async play(i: number): Promise<PlayedRollout> {
    const t0 = Date.now(); // workflow time: deterministic on replay
    const policy = this.versions.get(behaviourVersion(this.staleness, i))!;
    const { run, options } = this.input;
    const { rollout, sampling } = await sample(this.a, { run, iteration: i, policy }, options, this.plan);
    return { iteration: i, rollout, ...(sampling && { sampling }), ms: Date.now() - t0 };
  }
}
