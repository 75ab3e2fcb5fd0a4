import type { LakeMap } from './map.ts';
import { slipOutcomes } from './value-iteration.ts';

/**
 * The exact optimum under the agent protocol's budget: within a turn the agent commits to a
 * sequence of up to K actions without seeing where the ice took it; between turns it sees the
 * state. Value iteration (value-iteration.ts) lets the agent look after every action, so it is a
 * ceiling; this planner is what a perfect agent can actually reach.
 *
 * W(t, a, s) = best success probability from cell s with t turns and a actions left
 *            = max over sequences q, 1 ≤ |q| ≤ min(K, a), of
 *              P(goal during q) + Σ_s' P(at s' after q, alive) · W(t − 1, a − |q|, s').
 * Sequences are enumerated as a trie (4 + 16 + … + 4^K nodes per cell), carrying the distribution.
 */
export interface TurnPlan {
  turns: number;
  actions: number;
  perTurn: number;
  /** W, indexed [(t * (actions + 1) + a) * cells + s]. */
  value: Float64Array;
  /** Best sequence per entry, base-4 digits (first action least significant), with its length. */
  sequence: Int32Array;
  length: Uint8Array;
}

export function planLakeTurns(map: LakeMap, turns: number, actions: number, perTurn: number, slippery = true): TurnPlan {
  const n = map.holes.length;
  const size = (turns + 1) * (actions + 1) * n;
  const plan: TurnPlan = {
    turns, actions, perTurn, value: new Float64Array(size), sequence: new Int32Array(size), length: new Uint8Array(size),
  };
  const maxLength = Math.min(perTurn, actions, 15); // 15: base-4 digits that fit an Int32
  // Successors per (cell, action), and one distribution buffer per trie depth (no allocation per node).
  const outcomes = Array.from({ length: n * 4 }, (_, i) => slipOutcomes(map, Math.floor(i / 4), i % 4, slippery));
  const buffers = Array.from({ length: maxLength + 1 }, () => new Float64Array(n));
  const search: Search = { map, plan, outcomes, buffers, maxLength };
  for (let t = 1; t <= turns; t++) {
    for (let s = 0; s < n; s++) {
      if (map.holes[s] || s === map.goal) continue;
      const start = buffers[0] as Float64Array;
      start.fill(0);
      start[s] = 1;
      expand(search, t, s, 0, 0, 0);
    }
  }
  return plan;
}

interface Search {
  map: LakeMap;
  plan: TurnPlan;
  outcomes: number[][];
  buffers: Float64Array[];
  maxLength: number;
}

function expand(search: Search, t: number, s: number, goalMass: number, depth: number, code: number): void {
  const { map, plan, outcomes, buffers, maxLength } = search;
  const dist = buffers[depth] as Float64Array;
  const n = dist.length;
  const stride = plan.actions + 1;
  if (depth > 0) {
    // Close the turn here, for every action budget that allows a sequence this long.
    for (let a = depth; a <= plan.actions; a++) {
      let v = goalMass;
      const base = ((t - 1) * stride + (a - depth)) * n;
      for (let c = 0; c < n; c++) if (dist[c]) v += (dist[c] as number) * (plan.value[base + c] as number);
      const at = (t * stride + a) * n + s;
      if (v > (plan.value[at] as number) + 1e-12 || plan.length[at] === 0) {
        plan.value[at] = v;
        plan.sequence[at] = code;
        plan.length[at] = depth;
      }
    }
  }
  if (depth === maxLength) return;
  const next = buffers[depth + 1] as Float64Array;
  for (let action = 0; action < 4; action++) {
    next.fill(0);
    let reached = goalMass;
    for (let c = 0; c < n; c++) {
      const mass = dist[c] as number;
      if (!mass) continue;
      const moves = outcomes[c * 4 + action] as number[];
      const share = mass / moves.length;
      for (const o of moves) {
        if (o === map.goal) reached += share;
        else if (!map.holes[o]) next[o] = (next[o] as number) + share;
      }
    }
    expand(search, t, s, reached, depth + 1, code + action * 4 ** depth);
  }
}

/** The best sequence (indices into LAKE_ACTIONS) from cell `s` with `t` turns and `a` actions left. */
export function bestSequence(plan: TurnPlan, t: number, a: number, s: number, cells: number): number[] {
  const at = (Math.min(t, plan.turns) * (plan.actions + 1) + Math.min(a, plan.actions)) * cells + s;
  const out: number[] = [];
  let code = plan.sequence[at] as number;
  for (let i = 0; i < (plan.length[at] as number); i++) {
    out.push(code % 4);
    code = Math.floor(code / 4);
  }
  return out;
}

export function planValue(plan: TurnPlan, t: number, a: number, s: number, cells: number): number {
  return plan.value[(Math.min(t, plan.turns) * (plan.actions + 1) + Math.min(a, plan.actions)) * cells + s] as number;
}
