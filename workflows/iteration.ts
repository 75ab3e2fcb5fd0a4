/**
 * One training iteration as a chain of activities, passing artifact keys only:
 *   rollout shards ─► score ‖ reward ‖ filter ─► advantage ─► update (checkpoint i) ─► [validate] ─► checkpoint
 * Score, reward and filter read only the trajectories, so they run side by side.
 */
import {
  shardGroups, validatesAt, type CheckpointRef, type RunPlan, type Stage, type TrainingRunInput, type WireMetrics,
} from '../src/durable/protocol.ts';
import type { Stages } from './activities.ts';

export interface IterationOutcome {
  checkpoint: CheckpointRef;
  metrics: WireMetrics;
  warning: string | null;
  ms: number;
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
  const shards = await stage('rollout', () => Promise.all(shardGroups(plan.envGroups, options.rolloutShards).map((groups, shard) =>
    a.rollout.rolloutShard({ ...base, shard, groups, chunkGroups: options.chunkGroups }))));
  const batch = { ...base, rollout: shards.flatMap((s) => s.keys) };
  const [scored, rewards, kept] = await stage('score', () =>
    Promise.all([a.update.score(batch), a.update.reward(batch), a.update.filter(batch)]));
  const adv = await stage('advantage', () =>
    a.update.advantage({ ...batch, scored: scored.key, rewards: rewards.key, kept: kept.key }));
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
  return { checkpoint: updated.checkpoint, metrics, warning: updated.warning?.message ?? null, ms: Date.now() - startedAtMs };
}
