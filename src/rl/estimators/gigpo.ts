/**
 * GiGPO (group-in-group policy optimisation): two-level credit assignment without a critic, in two forms.
 * `paper` (Eq. 3 of the paper):
 *   Episode level: A_E = R − mean of R over the environment group's trajectories (optionally ÷ (std + 1e-6)),
 *   R the trajectory return (env rewards + format penalties).
 *   Step level: for turn k, G_k = Σ_{j≥k} γ^{j−k}·r_j with γ = stepGamma (0.95) and r_j the turn's reward
 *   (env reward + format penalty); steps are grouped by (environment group, anchor observation string),
 *   and A_S = G_k − mean of G over its step group (optionally ÷ (std + 1e-6)); a step group of one → 0.
 * `verl-agent` (its trainer, gigpo/core_gigpo.py with ray_trainer.py's apply_invalid_action_penalty; what
 *   its users' numbers come from): every turn is a row. A row's episode score is the trajectory's summed env
 *   reward plus that turn's own format penalty (its invalid-action penalty), and the episode mean/std run
 *   over the group's rows (compute_mean_std_cross_steps=True: a trajectory weighs as many turns as it
 *   has). G_k discounts env rewards only, and the turn's format penalty is added after discounting.
 *   Its default normalisation is mean-only (the gigpo preset sets groupNormByStd false). A group of one
 *   row gets 0 here (verl-agent passes the raw score), unreachable since GiGPO needs groupSize ≥ 2.
 * Both: A = A_E + ω·A_S on every assistant token of turn k. Per-turn rewards come from the batch's turn
 * records, so GiGPO does not depend on reward placement.
 */
import {
  type Batch,
  type Groups,
  groupRows,
  tokenTurns,
  trajectoryReturn,
  turnReward,
  type BatchTurn,
} from '../batch.ts';
import { maskedSummary } from '../stats.ts';
import { type AdvantageInput, type AdvantageOutput, centreInGroups } from './common.ts';

export type GigpoForm = 'paper' | 'verl-agent';

interface Steps {
  /** Flat list of (row, turn) pairs and their discounted step returns. */
  readonly row: number[];
  readonly turn: number[];
  readonly stepReturn: number[];
}

/** paper: discount each turn's reward; verl-agent: discount env rewards, then add the turn's penalty. */
function collectSteps(batch: Batch, gamma: number, form: GigpoForm): Steps {
  const steps: Steps = { row: [], turn: [], stepReturn: [] };
  const discounted = form === 'paper' ? turnReward : (turn: BatchTurn) => turn.envReward;
  batch.trajectories.forEach((t, b) => {
    const returns = new Array<number>(t.turns.length);
    let running = 0;
    for (let k = t.turns.length - 1; k >= 0; k--) returns[k] = running = discounted(t.turns[k]) + gamma * running;
    returns.forEach((g, k) => {
      steps.row.push(b);
      steps.turn.push(k);
      steps.stepReturn.push(form === 'paper' ? g : g + t.turns[k].formatPenalty);
    });
  });
  return steps;
}

/** Episode advantage per step: per trajectory (paper), or per turn row over the group's rows (verl-agent). */
function episodeAdvantages(batch: Batch, steps: Steps, form: GigpoForm, normByStd: boolean): number[] {
  if (form === 'paper') {
    const episode = centreInGroups(batch.trajectories.map(trajectoryReturn), groupRows(batch.trajectories), normByStd);
    return steps.row.map((b) => episode[b]);
  }
  const envReturn = batch.trajectories.map((t) => t.turns.reduce((sum, turn) => sum + turn.envReward, 0));
  const scores = steps.row.map((b, s) => envReturn[b] + batch.trajectories[b].turns[steps.turn[s]].formatPenalty);
  const byGroup = groupRows(steps.row.map((b) => batch.trajectories[b]));
  return centreInGroups(scores, byGroup, normByStd);
}

/** Step groups: same environment group and identical anchor observation, in order of first appearance. */
function anchorGroups(batch: Batch, steps: Steps): Groups {
  const index = new Map<string, number[]>();
  steps.row.forEach((b, s) => {
    const t = batch.trajectories[b];
    const key = JSON.stringify([t.groupId, t.turns[steps.turn[s]].observation]);
    const rows = index.get(key);
    if (rows) rows.push(s);
    else index.set(key, [s]);
  });
  return { ids: [...index.keys()], rows: [...index.values()] };
}

export function gigpo(input: AdvantageInput): AdvantageOutput {
  const { batch, params } = input;
  const form = params.gigpoForm ?? 'paper';
  const steps = collectSteps(batch, params.stepGamma, form);
  const episode = episodeAdvantages(batch, steps, form, params.normByStd);
  const stepGroups = anchorGroups(batch, steps);
  const stepAdv = centreInGroups(steps.stepReturn, stepGroups, params.normByStd);
  const perTurn = batch.trajectories.map((t) => new Array<number>(t.turns.length).fill(0));
  stepAdv.forEach((a, s) => (perTurn[steps.row[s]][steps.turn[s]] = episode[s] + params.omega * a));
  const advantages = new Float32Array(batch.B * batch.T);
  for (let b = 0; b < batch.B; b++) {
    const owner = tokenTurns(batch, b);
    for (let c = 0; c < batch.T; c++) if (owner[c] >= 0) advantages[b * batch.T + c] = perTurn[b][owner[c]];
  }
  const singletons = stepGroups.rows.filter((r) => r.length === 1).length;
  const metrics = {
    ...maskedSummary('advantages', advantages, batch.lossMask),
    'gigpo/step_groups': stepGroups.rows.length,
    'gigpo/singleton_step_group_fraction': stepGroups.rows.length === 0 ? 0 : singletons / stepGroups.rows.length,
  };
  return { advantages, returns: null, metrics };
}
