/**
 * One training iteration as a chain of activities, passing artifact keys only:
 *   rollout shards [─► planSampling ─► more shards …] ─► score ‖ reward ‖ filter ─► advantage
 *   ─► update (checkpoint i) ─► [validate] ─► checkpoint
 * Score, reward and filter read only the trajectories (and the sampling plan), so they run side by side;
 * score derives the filter's kept rows itself and scores only those.
 */
import {
  shardGroups, validatesAt, type CheckpointRef, type DurableOptions, type RunPlan, type Stage, type StageInput,
  type TrainingRunInput, type UpdateResult, type WireMetrics,
} from '../src/durable/protocol.ts';
import type { Stages } from './activities.ts';

export interface IterationOutcome {
  checkpoint: CheckpointRef;
  metrics: WireMetrics;
  warning: string | null;
  /** The stop or fork onCollapse calls for after this iteration's warning; null otherwise. */
  collapse: UpdateResult['collapse'];
  ms: number;
}

/** Plays `groups` (the iteration's group numbers) as rollout shards; returns their artifact keys in group order. */
async function play(a: Stages, base: StageInput, o: DurableOptions, groups: number[], round: number): Promise<string[]> {
  const shards = await Promise.all(shardGroups(groups.length, o.rolloutShards).map((slots, shard) =>
    a.rollout.rolloutShard({ ...base, round, shard, groups: slots.map((s) => groups[s]), chunkGroups: o.chunkGroups })));
  return shards.flatMap((s) => s.keys);
}

/** The iteration's groups, plus DAPO's extra rounds (new group numbers, hence new seeds) while the plan asks. */
async function sample(a: Stages, base: StageInput, o: DurableOptions, plan: RunPlan): Promise<{ rollout: string[]; sampling?: string }> {
  const rollout = await play(a, base, o, Array.from({ length: plan.envGroups }, (_, g) => g), 0);
  if (!plan.dynamicSampling) return { rollout };
  let next = plan.envGroups;
  for (let tries = 1; ; tries++) {
    const p = await a.update.planSampling({ ...base, rollout, tries });
    if (p.action !== 'sample-more') return { rollout, sampling: p.key };
    rollout.push(...await play(a, base, o, Array.from({ length: p.groupsNeeded }, (_, k) => next + k), tries));
    next += p.groupsNeeded;
  }
}

export async function runIteration(a: Stages, input: TrainingRunInput, plan: RunPlan, iteration: number,
  policy: CheckpointRef, enter: (stage: Stage) => void): Promise<IterationOutcome> {
  const startedAtMs = Date.now(); // workflow time: deterministic on replay
  const timingsMs: Record<string, number> = {};
  const stage = async <T>(name: Stage, fn: () => Promise<T>): Promise<T> => {
    enter(name);
    const t0 = Date.now();
    try {
      return await fn();
    } finally {
      timingsMs[name] = Date.now() - t0;
    }
  };
  const { run, options } = input;
  const base = { run, iteration, policy };
  const { rollout, sampling } = await stage('rollout', () => sample(a, base, options, plan));
  const batch = { ...base, rollout };
  const [scored, rewards, kept] = await stage('score', () =>
    Promise.all([a.update.score({ ...batch, sampling }), a.update.reward(batch), a.update.filter({ ...batch, sampling })]));
  const adv = await stage('advantage', () =>
    a.update.advantage({ ...batch, scored: scored.key, rewards: rewards.key, kept: kept.key, sampling }));
  const updated = await stage('update', () =>
    a.update.update({ ...batch, scored: scored.key, advantage: adv.key, metrics: adv.metrics }));
  const val = validatesAt(plan, iteration)
    ? await stage('validate', () => a.rollout.validate({ run, iteration, policy: updated.checkpoint }))
    : null;
  const metrics = { ...updated.metrics, ...val?.metrics };
  await stage('checkpoint', () => a.update.checkpoint({
    run, iteration, checkpoint: updated.checkpoint, metrics, timingsMs: { ...timingsMs }, warning: updated.warning,
    startedAtMs, keepArtifacts: options.keepArtifacts,
  }));
  return {
    checkpoint: updated.checkpoint, metrics, warning: updated.warning?.message ?? null, collapse: updated.collapse ?? null,
    ms: Date.now() - startedAtMs,
  };
}
