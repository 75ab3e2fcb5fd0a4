/**
 * The rollout stage: an iteration's episodes, or a shard of its groups, from the driver's episode source, and DAPO's
 * dynamic sampling (more groups while too few carry signal). The durable driver's `rolloutShard` and `planSampling`
 * activities.
 */
import { trajectoryRecord } from '../assemble.ts';
import { type DynamicSamplingPlan, planDynamicSampling } from '../dynamic-sampling.ts';
import { sampleRounds } from '../sampling-rounds.ts';
import type { RlConfig } from '../config.ts';
import type { Trajectory } from '../rollout.ts';
import { samplingSeed, trainSeed } from '../seeds.ts';
import type { EpisodeSource } from '../episode-source.ts';

/**
 * Stage: the iteration's rollouts, or a shard of them (`groups`: which of the iteration's groups), played by the
 * driver's episode source (episode-source.ts: the built-in environments or an agent program).
 */
export function rolloutStage(
  c: RlConfig,
  iteration: number,
  episodes: EpisodeSource,
  groups?: readonly number[],
): Promise<Trajectory[]> {
  const ids = groups ?? Array.from({ length: c.envGroups }, (_, g) => g);
  return episodes({
    seeds: ids.map((g) => trainSeed(c, iteration, g)),
    groupIds: ids,
    groupSize: c.groupSize,
    temperature: c.trainTemperature,
    samplingSeed: samplingSeed(c, iteration),
    split: 'train',
    iteration,
  });
}

/** Stage (pure): DAPO's plan after `tries` rounds: enough groups whose returns differ, or how many more to play. */
export function samplingPlan(c: RlConfig, trajectories: readonly Trajectory[], tries: number): DynamicSamplingPlan {
  return planDynamicSampling({
    trajectories: trajectories.map(trajectoryRecord),
    targetGroups: c.envGroups,
    tries,
    maxTries: c.dynamicSamplingMaxTries,
  });
}

/**
 * The rollout of an iteration, with DAPO dynamic sampling when configured: groups whose returns are all
 * equal carry no signal, so more groups (new seeds) are played, up to dynamicSamplingMaxTries rounds.
 */
export async function sampleGroups(
  c: RlConfig,
  iteration: number,
  episodes: EpisodeSource,
): Promise<{ trajectories: Trajectory[]; informative?: readonly string[]; metrics: Record<string, number> }> {
  const trajectories: Trajectory[] = [];
  const play = async (groups: number[]) =>
    void trajectories.push(...(await rolloutStage(c, iteration, episodes, groups)));
  const plan = await sampleRounds(c, play, (tries) => samplingPlan(c, trajectories, tries));
  return plan ? { trajectories, informative: plan.keptGroupIds, metrics: plan.metrics } : { trajectories, metrics: {} };
}

/** An iteration's rollout as sampleGroups returns it. */
export type SampledGroups = Awaited<ReturnType<typeof sampleGroups>>;
