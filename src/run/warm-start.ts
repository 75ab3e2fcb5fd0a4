/**
 * The warm-start before RL, one kernel for both drivers: supervised steps on demonstrations (sft.ts), or
 * another run's actor (`initFrom`: a loader the embedded driver passes for --init-from). Then the warm-start's
 * compiled programs are freed, and RL starts with fresh optimizer moments and a KL reference equal to the
 * warm-started policy. Supervised steps on a pretrained model are bracketed by the perplexity of a fixed
 * general text (general-ability.ts), so a warm start that destroys the model is seen.
 */
import type { PolicyHandle } from '../policy/engine/handle.ts';
import type { CodeRunner } from '../tools/sandbox/pool.ts';
import type { RlConfig } from '../rl/config.ts';
import type { IterationModels } from '../rl/stages/models.ts';
import type { RunText } from '../rl/run-model.ts';
import { sftWarmup } from '../rl/sft.ts';
import { GENERAL_PPL_WARN, generalPerplexity } from '../rl/general-ability.ts';
import { log } from '../log.ts';

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
  const checked = !initFrom && c.sftSteps > 0 && c.model !== '';
  const before = checked ? await generalPerplexity(models.actor, text.tokenizer) : undefined;
  const metrics = initFrom ? await initFrom(models.actor) : await sftWarmup(c, models.actor, text, code);
  if (before !== undefined) {
    const after = await generalPerplexity(models.actor, text.tokenizer);
    Object.assign(metrics, { 'sft/general_ppl_before': before, 'sft/general_ppl_after': after });
    const detail = { before: Number(before.toFixed(2)), after: Number(after.toFixed(2)) };
    if (after > before * GENERAL_PPL_WARN)
      log.warn(
        detail,
        'the warm start raised the perplexity of a general text past 1.5×: it may have damaged the model ' +
          '(lower sftLr, or train LoRA)',
      );
    else log.info(detail, 'warm start: perplexity of a general text');
  }
  // The warm-start's compiled programs are never run again; their onnxruntime arenas held ~0.9 GB
  // after 150 Sokoban steps (measured), memory RL needs.
  await models.actor.releasePrograms();
  if (c.sftSteps === 0 && !initFrom) return null;
  const { weights } = await models.actor.getState(false);
  await models.actor.setState({ weights, optimizer: null, step: 0 }, { allowMissing: [] });
  await models.ref?.setState({ weights, optimizer: null, step: 0 }, { allowMissing: [] });
  return metrics;
}
