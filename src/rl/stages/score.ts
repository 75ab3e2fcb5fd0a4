/**
 * The score stage: old and reference log-probs and values of the trained rows, and RAGEN-2's collapse probe of the
 * first turns. The durable driver's `score` activity.
 */
import type { AssembledBatch } from '../assemble.ts';
import type { RlConfig } from '../config.ts';
import { behaviourGap } from '../metrics.ts';
import type { Trajectory } from '../rollout.ts';
import { keepRows, type KeptRows, type ScoredBatch } from '../kept-rows.ts';
import { takeRows } from '../batch.ts';
import { placeRewards } from '../reward.ts';
import { hasAdvantageSignal } from '../update.ts';
import { advantageStage } from './advantage.ts';
import { samplingSeed } from '../seeds.ts';
import type { CollapseProbe } from '../collapse-metrics.ts';
import { collapseProbe, type Scorer } from '../collapse-probe.ts';
import type { IterationModels } from './models.ts';

/**
 * Stage: old log-probs (actor, or the rollout's own), values (critic) and reference log-probs (KL) of the
 * trained rows `rows` (indices into the assembled batch). Scoring a row alone or among others gives the same
 * numbers (the programs' rows are independent), so scoring only these equals scoring all and picking them. The
 * log-probs are those of the trained tokens (0 elsewhere): the actor's LM head runs on nothing else.
 */
export async function scoreStage(
  c: RlConfig,
  all: AssembledBatch,
  rows: readonly number[],
  models: IterationModels,
): Promise<ScoredBatch> {
  const kept = keepRows(all, rows);
  const { behaviour, tokens } = kept;
  if (rows.length === 0 || actorStepSkipped(c, all, kept, models.critic !== null)) {
    return { logprobs: behaviour, metrics: {} };
  }
  const recompute = c.oldLogprobs === 'recompute';
  // Every reader of the log-probs (the loss, TIS, the behaviour gap) reads the trained tokens' only.
  const trained = { ...tokens, headMask: tokens.lossMask };
  const logprobs = recompute ? (await models.actor.score(trained, c.trainTemperature)).logprobs! : behaviour;
  const values = models.critic ? (await models.critic.score(tokens)).values : undefined;
  const refLogprobs = models.ref ? (await models.ref.score(trained, c.trainTemperature)).logprobs : undefined;
  return {
    logprobs,
    values,
    refLogprobs,
    metrics: recompute ? behaviourGap(logprobs, behaviour, tokens.lossMask) : {},
  };
}

/**
 * Whether the update is certain to skip the actor step (skipNoSignal) whatever the scores say, so scoring would be
 * wasted: without a critic, the advantages are a function of the rewards alone (the importance weights of
 * offPolicyCorrection only scale them), and when every trained token's is 0 the update trains nothing. On a real
 * model, scoring such an iteration (every group agrees) was a third of its time.
 */
export function actorStepSkipped(c: RlConfig, all: AssembledBatch, kept: KeptRows, critic: boolean): boolean {
  if (!c.skipNoSignal || critic) return false;
  const { tokenRewards } = placeRewards({ batch: all.batch, placement: c.rewardPlacement });
  const adv = advantageStage(c, kept.batch, takeRows(tokenRewards, all.batch.T, kept.rows));
  return !hasAdvantageSignal(kept.tokens.lossMask, adv.advantages);
}

/**
 * Stage: RAGEN-2's collapse probe of the rollouts, scored by the actor the update starts from (the one that played
 * them, unless asynchronous: both drivers score with the policy of checkpoint i − 1); null when not due.
 */
export function collapseStage(
  c: RlConfig,
  iteration: number,
  trajectories: readonly Trajectory[],
  actor: Scorer,
): Promise<CollapseProbe | null> {
  return collapseProbe(c, iteration, trajectories, actor, samplingSeed(c, iteration));
}
