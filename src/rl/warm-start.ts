/**
 * The warm-start before RL, one kernel for both drivers: supervised steps on demonstrations (sft.ts), or
 * another run's actor (`initFrom`: a loader the embedded driver passes for --init-from). Then the warm-start's
 * compiled programs are freed, and RL starts with fresh optimizer moments and a KL reference equal to the
 * warm-started policy.
 */
import type { PolicyHandle } from '../policy/engine/handle.ts';
import type { CodeRunner } from '../tools/sandbox/pool.ts';
import type { RlConfig } from './config.ts';
import type { IterationModels } from './iteration.ts';
import type { RunText } from './run-model.ts';
import { sftWarmup } from './sft.ts';

/** Loads an actor's starting weights from elsewhere; returns metrics to log. */
export type InitActor = (actor: PolicyHandle) => Promise<Record<string, number>>;

/** Returns the warm-start's metrics, or null when there was none (no SFT steps, no initFrom). */
export async function warmStart(
  c: RlConfig,
  models: Pick<IterationModels, 'actor' | 'ref'>,
  text: RunText,
  code?: CodeRunner,
  initFrom?: InitActor,
): Promise<Record<string, number> | null> {
  const metrics = initFrom ? await initFrom(models.actor) : await sftWarmup(c, models.actor, text, code);
  // The warm-start's compiled programs are never run again; their onnxruntime arenas held ~0.9 GB
  // after 150 Sokoban steps (measured), memory RL needs.
  await models.actor.releasePrograms();
  if (c.sftSteps === 0 && !initFrom) return null;
  const { weights } = await models.actor.getState(false);
  await models.actor.setState({ weights, optimizer: null, step: 0 }, { allowMissing: [] });
  await models.ref?.setState({ weights, optimizer: null, step: 0 }, { allowMissing: [] });
  return metrics;
}
