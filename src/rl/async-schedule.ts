/**
 * Which policy version plays which iteration's rollouts (`asyncStaleness` k). Version v is the actor of
 * checkpoint v (0: the starting policy). On-policy (k = 0) iteration i plays with version i − 1, the
 * policy its update starts from; with k ≥ 1 it plays with version i − 1 − k, so its rollout can run while
 * the updates of iterations i − k … i − 1 train. Pure functions of (k, i): which version generates which
 * group is fixed by the schedule, never by timing, so a resumed or durable run plays the same rollouts.
 * No imports: the workflow bundle uses this module too.
 */

/** The policy version (checkpoint iteration) whose weights play iteration i's rollouts. */
export function behaviourVersion(staleness: number, iteration: number): number {
  return Math.max(0, iteration - 1 - staleness);
}

/** Updates between the behaviour policy and the policy iteration i trains from (i − 1): min(k, i − 1). */
export function policyLag(staleness: number, iteration: number): number {
  return iteration - 1 - behaviourVersion(staleness, iteration);
}

/**
 * Versions older than checkpoint c that the rollouts after it still need (iterations c + 1 … c + k play
 * with versions c − k … c − 1): what a checkpoint must name so that a run resumed from it plays the same.
 */
export function pendingVersions(staleness: number, checkpoint: number): number[] {
  const from = Math.max(0, checkpoint - staleness);
  return Array.from({ length: Math.max(0, checkpoint - from) }, (_, k) => from + k);
}

/**
 * The checkpoints of the versions checkpoint c must name (pendingVersions), oldest first, from `known`
 * (version → its checkpoint); undefined when there are none (always, on-policy).
 */
export function pendingCheckpoints<R>(
  staleness: number,
  checkpoint: number,
  known: ReadonlyMap<number, R>,
): R[] | undefined {
  const pending = pendingVersions(staleness, checkpoint);
  if (pending.length === 0) return undefined;
  return pending.map((v) => {
    const ref = known.get(v);
    if (ref === undefined) throw new Error(`policy version ${v} has no known checkpoint`);
    return ref;
  });
}

/** The iterations (up to `last`) that play with exactly version v: 1 … k + 1 for version 0, else v + 1 + k. */
export function iterationsPlayedBy(staleness: number, version: number, last: number): number[] {
  const out: number[] = [];
  for (
    let i = version === 0 ? 1 : version + 1 + staleness;
    i <= last && behaviourVersion(staleness, i) === version;
    i++
  )
    out.push(i);
  return out;
}
