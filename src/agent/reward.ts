/**
 * How rewards are assembled, the one definition every stage uses (the episode, the rollout, the trainer's
 * batch, replay, the gateway):
 * - a turn's reward = its environment reward + its format penalty. The penalty is ≤ 0 everywhere (the
 *   config's `formatPenalty`, −0.1 by default, charged to a turn with a dropped or unparsable action);
 *   this is the reward the agent is told after the turn and the one `per-turn` placement trains on;
 * - a trajectory's return = the sum of its turn rewards, turn by turn (`trajectory-end` placement, the
 *   advantage estimators, the filters and the batch metrics read it).
 * The episode (agent/episode.ts) keeps the penalty it charged as a magnitude (`penaltyCharged` ≥ 0) and
 * signedPenalty turns it into the turn's ≤ 0 penalty; an un-penalised turn thus logs −0, as it always has.
 * Three places differ from the definitions above on purpose, and say so where they do it:
 * - a trajectory event's `trajectoryReturn` is `loggedReturn`: environment reward and penalty added to the
 *   running sum one after the other, as rollouts have always logged it. It can differ from the return in
 *   the last bit; it is kept so that existing logs and a run resumed over them stay bit-identical. Nothing
 *   trains on it: the trainer and replay rebuild the return from the turns.
 * - tool-integrated runs with a `toolReward` other than `env` replace the turns' rewards by the rubric's
 *   score on the last turn (rl/rewards/apply.ts);
 * - an external agent's turn reward is its call's reward, plus the episode's outcome on the last call
 *   (gateway/trajectories.ts).
 */

/** What a turn's reward is made of. */
export interface RewardParts {
  readonly envReward: number;
  /** ≤ 0. */
  readonly formatPenalty: number;
}

/** The config's default formatPenalty (rl/config-fields.ts), for episodes played without a run config. */
export const DEFAULT_FORMAT_PENALTY = -0.1;

/** A turn's ≤ 0 format penalty from the magnitude the episode charged. */
export const signedPenalty = (charged: number): number => -charged;

export const turnReward = (turn: RewardParts): number => turn.envReward + turn.formatPenalty;

export function trajectoryReturn(turns: readonly RewardParts[]): number {
  let r = 0;
  for (const turn of turns) r += turnReward(turn);
  return r;
}

/** The return a trajectory event logs (see the module comment for why it is summed this way). */
export function loggedReturn(turns: readonly RewardParts[]): number {
  return turns.reduce((s, t) => s + t.envReward + t.formatPenalty, 0);
}
