/**
 * Which checkpoints to keep: per lineage, the last `keepLast` iterations plus every iteration that is a
 * multiple of `keepEvery` (milestones for evaluation). Pure; `applyRetention` does the deleting.
 */
import { ConfigError } from '../errors.ts';
import type { CheckpointId, CheckpointStore } from './types.ts';

export interface RetentionPolicy {
  /** Most recent checkpoints kept per lineage; at least 1, so there is always a point to resume from. */
  keepLast: number;
  /** Also keep iterations divisible by this (0 = no milestones). */
  keepEvery: number;
}

export interface RetentionPlan<T extends CheckpointId> {
  keep: T[];
  drop: T[];
}

function validate(policy: RetentionPolicy): void {
  if (!Number.isSafeInteger(policy.keepLast) || policy.keepLast < 1) {
    throw new ConfigError('retention.keepLast', `must be an integer >= 1, got ${policy.keepLast}`);
  }
  if (!Number.isSafeInteger(policy.keepEvery) || policy.keepEvery < 0) {
    throw new ConfigError('retention.keepEvery', `must be an integer >= 0, got ${policy.keepEvery}`);
  }
}

/** Splits checkpoints into keep and drop; both keep the input order. */
export function planRetention<T extends CheckpointId>(
  checkpoints: readonly T[],
  policy: RetentionPolicy,
): RetentionPlan<T> {
  validate(policy);
  const recent = new Set<T>();
  const lineages = new Set(checkpoints.map((c) => c.lineageId));
  for (const lineage of lineages) {
    const newestFirst = checkpoints.filter((c) => c.lineageId === lineage).sort((a, b) => b.iteration - a.iteration);
    for (const c of newestFirst.slice(0, policy.keepLast)) recent.add(c);
  }
  const kept = (c: T): boolean => recent.has(c) || (policy.keepEvery > 0 && c.iteration % policy.keepEvery === 0);
  return { keep: checkpoints.filter(kept), drop: checkpoints.filter((c) => !kept(c)) };
}

/** Deletes the run's checkpoints the policy drops; returns them. */
export async function applyRetention(
  store: CheckpointStore,
  runId: string,
  policy: RetentionPolicy,
): Promise<CheckpointId[]> {
  const { drop } = planRetention(await store.list(runId), policy);
  for (const c of drop) await store.delete(c.runId, c.lineageId, c.iteration);
  return drop;
}
