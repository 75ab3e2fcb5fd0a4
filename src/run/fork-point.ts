/**
 * Where onCollapse=fork rewinds to (collapse-action.ts), one rule for both drivers: the newest checkpoint of
 * the surviving history — the lineage's chain of starts, oldest first — at an iteration before the detector's
 * first warning sign. Undefined when retention left none.
 */
import type { LineageStart } from '../events/index.ts';
import { survivingCheckpoints, survivingPlan } from '../events/lineage.ts';
import type { CheckpointId } from '../storage/index.ts';
import { forkPointBefore } from '../rl/collapse-action.ts';

export function forkPoint<T extends CheckpointId>(
  starts: readonly LineageStart[],
  checkpoints: readonly T[],
  before: number,
): T | undefined {
  return forkPointBefore(survivingCheckpoints(survivingPlan(starts), checkpoints), before);
}
