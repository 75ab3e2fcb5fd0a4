/**
 * GiGPO (group-in-group policy optimisation): two-level credit assignment without a critic.
 *   Episode level: A_E = R − mean of R over the environment group (optionally ÷ (std + 1e-6)).
 *   Step level: for turn k, G_k = Σ_{j≥k} γ^{j−k}·r_j with γ = stepGamma (0.95) and r_j the turn's reward
 *   (env reward + format penalty); steps are grouped by (environment group, anchor observation string),
 *   and A_S = G_k − mean of G over its step group (optionally ÷ (std + 1e-6)); a step group of one → 0.
 *   A = A_E + ω·A_S on every assistant token of turn k.
 * Per-turn rewards come from the batch's turn records, so GiGPO does not depend on reward placement.
 */
import { type Batch, type Groups, groupRows, tokenTurns, trajectoryReturn, turnReward } from '../batch.ts';
import { maskedSummary } from '../stats.ts';
import { type AdvantageInput, type AdvantageOutput, centreInGroups } from './common.ts';

interface Steps {
  /** Flat list of (row, turn) pairs and their discounted step returns. */
  readonly row: number[];
  readonly turn: number[];
  readonly stepReturn: number[];
}

function collectSteps(batch: Batch, gamma: number): Steps {
  const steps: Steps = { row: [], turn: [], stepReturn: [] };
  batch.trajectories.forEach((t, b) => {
    const returns = new Array<number>(t.turns.length);
    let running = 0;
    for (let k = t.turns.length - 1; k >= 0; k--) returns[k] = running = turnReward(t.turns[k]) + gamma * running;
    returns.forEach((g, k) => {
      steps.row.push(b);
      steps.turn.push(k);
      steps.stepReturn.push(g);
    });
  });
  return steps;
}

/** Step groups: same environment group and identical anchor observation, in order of first appearance. */
function anchorGroups(batch: Batch, steps: Steps): Groups {
  const index = new Map<string, number[]>();
  steps.row.forEach((b, s) => {
    const t = batch.trajectories[b];
    const key = JSON.stringify([t.groupId, t.turns[steps.turn[s]].anchor]);
    const rows = index.get(key);
    if (rows) rows.push(s);
    else index.set(key, [s]);
  });
  return { ids: [...index.keys()], rows: [...index.values()] };
}

export function gigpo(input: AdvantageInput): AdvantageOutput {
  const { batch, params } = input;
  const returns = batch.trajectories.map(trajectoryReturn);
  const episode = centreInGroups(returns, groupRows(batch.trajectories), params.normByStd);
  const steps = collectSteps(batch, params.stepGamma);
  const stepGroups = anchorGroups(batch, steps);
  const stepAdv = centreInGroups(steps.stepReturn, stepGroups, params.normByStd);
  const perTurn = batch.trajectories.map((t) => new Array<number>(t.turns.length).fill(0));
  stepAdv.forEach((a, s) => (perTurn[steps.row[s]][steps.turn[s]] = a));
  const advantages = new Float32Array(batch.B * batch.T);
  for (let b = 0; b < batch.B; b++) {
    const owner = tokenTurns(batch, b);
    for (let c = 0; c < batch.T; c++) {
      if (owner[c] >= 0) advantages[b * batch.T + c] = episode[b] + params.omega * perTurn[b][owner[c]];
    }
  }
  const singletons = stepGroups.rows.filter((r) => r.length === 1).length;
  const metrics = {
    ...maskedSummary('advantages', advantages, batch.lossMask),
    'gigpo/step_groups': stepGroups.rows.length,
    'gigpo/singleton_step_group_fraction': stepGroups.rows.length === 0 ? 0 : singletons / stepGroups.rows.length,
  };
  return { advantages, returns: null, metrics };
}
