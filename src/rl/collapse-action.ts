/**
 * What a run does when the Echo-Trap detector fires (config onCollapse), as pure decisions both drivers
 * share:
 * - warn: record the warning and go on;
 * - stop: end the run after that iteration (its checkpoint written);
 * - fork: rewind to the newest checkpoint of the surviving history at an iteration before the detector's
 *   first warning sign (evidence.firstSignIteration) and go on from there as a new lineage whose learning
 *   rates (actor and critic) are the config's × forkLrScale^forks. `forks` counts the forks behind the
 *   live lineage, so a collapse after a rewind past an earlier fork still halves again; after maxForks
 *   forks a further collapse stops the run.
 * The decision travels in the checkpoint's trainer state (`collapse`), so a run killed between that
 * checkpoint and the fork takes it on resume, exactly as it would have.
 */
import type { RlConfig } from './config.ts';
import type { EchoTrapDetector, EchoTrapWarning } from './echo-trap.ts';
import { ACTOR_GRAD_NORM, ENTROPY_MEAN, IN_GROUP_STD_ALL, SUCCESS_RATE } from './metric-names.ts';

export type CollapseAction =
  | { kind: 'stop'; iteration: number; reason: string }
  | { kind: 'fork'; iteration: number; reason: string; before: number; forks: number };

/** The config a lineage trains with: both learning rates scaled by forkLrScale once per fork behind it. */
export function lineageConfig(c: RlConfig, forks: number): RlConfig {
  if (forks === 0) return c;
  const scale = c.forkLrScale ** forks;
  return Object.freeze({ ...c, lrActor: c.lrActor * scale, lrCritic: c.lrCritic * scale });
}

/** The action a warning calls for under the config (null for onCollapse=warn or no warning). */
export function collapseAction(c: RlConfig, forks: number, warning: EchoTrapWarning | null): CollapseAction | null {
  if (!warning || c.onCollapse === 'warn') return null;
  const at = warning.iteration;
  if (c.onCollapse === 'stop') return { kind: 'stop', iteration: at, reason: `onCollapse=stop: ${warning.message}` };
  if (forks >= c.maxForks) {
    const reason = `collapsed again after ${forks} forks (maxForks ${c.maxForks}): ${warning.message}`;
    return { kind: 'stop', iteration: at, reason };
  }
  const before = warning.evidence.firstSignIteration ?? at;
  const scale = c.forkLrScale ** (forks + 1);
  const reason =
    `${warning.message}; first sign at iteration ${before}, so the run forks from the newest checkpoint ` +
    `before it with lrActor and lrCritic × ${c.forkLrScale} (× ${Number(scale.toPrecision(6))} of the config's)`;
  return { kind: 'fork', iteration: at, reason, before, forks: forks + 1 };
}

/**
 * The detector's observation of iteration `iteration` (its training metrics), and the stop or fork the warning
 * calls for, if it fired: what both drivers do after each update.
 */
export function observeIteration(
  c: RlConfig,
  echo: EchoTrapDetector,
  forks: number,
  iteration: number,
  metrics: Readonly<Record<string, number>>,
): { warning: EchoTrapWarning | null; collapse: CollapseAction | null } {
  const warning = echo.observe({
    iteration,
    inGroupRewardStd: metrics[IN_GROUP_STD_ALL] ?? 0,
    entropy: metrics[ENTROPY_MEAN] ?? 0,
    gradNorm: metrics[ACTOR_GRAD_NORM] ?? null,
    successRate: metrics[SUCCESS_RATE] ?? 0,
  });
  return { warning, collapse: collapseAction(c, forks, warning) };
}

/** The newest of `checkpoints` (the surviving history's) at an iteration before `before`, if any. */
export function forkPointBefore<T extends { iteration: number }>(
  checkpoints: readonly T[],
  before: number,
): T | undefined {
  return checkpoints.filter((cp) => cp.iteration < before).sort((a, b) => b.iteration - a.iteration)[0];
}
