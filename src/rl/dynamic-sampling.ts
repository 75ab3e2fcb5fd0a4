/**
 * DAPO dynamic sampling as a pure planner. The rollout manager loops:
 *   collect groups → plan → (sample-more: roll out `groupsNeeded` more groups, append, plan again) → train.
 * Groups whose trajectory returns are all equal carry no GRPO signal and are dropped; the batch is
 * refilled until `targetGroups` informative groups exist or `maxTries` sampling rounds have been spent.
 * Nothing is mutated; the planner only reads what has been collected so far.
 */
import type { TrajectoryRecord } from './batch.ts';
import { summariseGroups } from './filters.ts';

export interface DynamicSamplingInput {
  /** Every trajectory collected so far in this iteration, over all sampling rounds. */
  readonly trajectories: readonly TrajectoryRecord[];
  /** Informative groups wanted in the training batch. */
  readonly targetGroups: number;
  /** Sampling rounds already done (≥ 1 once anything was collected). */
  readonly tries: number;
  /** Most sampling rounds allowed (DAPO: 10). */
  readonly maxTries: number;
}

export type DynamicSamplingAction = 'done' | 'sample-more' | 'give-up';

export interface DynamicSamplingPlan {
  /**
   * done: enough informative groups; train on `keptGroupIds` (the first `targetGroups` of them, in order
   * of first appearance — DAPO truncates the surplus the same way).
   * sample-more: roll out at least `groupsNeeded` more groups and call again.
   * give-up: `maxTries` rounds spent; `keptGroupIds` holds every informative group found (may be short
   * or empty) and the caller decides whether to train on a smaller batch.
   */
  readonly action: DynamicSamplingAction;
  readonly keptGroupIds: readonly string[];
  readonly groupsNeeded: number;
  readonly metrics: Record<string, number>;
}

export function planDynamicSampling(input: DynamicSamplingInput): DynamicSamplingPlan {
  const { trajectories, targetGroups, tries, maxTries } = input;
  const groups = summariseGroups(trajectories);
  const informative = groups.filter((g) => !g.allEqual).map((g) => g.id);
  const groupsNeeded = Math.max(0, targetGroups - informative.length);
  const action: DynamicSamplingAction = groupsNeeded === 0 ? 'done' : tries >= maxTries ? 'give-up' : 'sample-more';
  const keptGroupIds = action === 'done' ? informative.slice(0, targetGroups) : informative;
  const metrics = {
    'dynamic_sampling/tries': tries,
    'dynamic_sampling/groups_collected': groups.length,
    'dynamic_sampling/groups_informative': informative.length,
    'dynamic_sampling/groups_needed': groupsNeeded,
    'dynamic_sampling/gave_up': action === 'give-up' ? 1 : 0,
  };
  return { action, keptGroupIds, groupsNeeded, metrics };
}
