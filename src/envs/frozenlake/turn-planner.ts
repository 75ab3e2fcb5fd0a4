import type { LakeMap } from './map.ts';
import { slipOutcomes, type SlipOutcomes } from './value-iteration.ts';

/**
 * The exact optimum under the agent protocol's budget: within a turn the agent commits to a
 * sequence of up to K actions without seeing where the ice took it; between turns it sees the
 * state. Value iteration (value-iteration.ts) lets the agent look after every action, so it is a
 * ceiling; this planner is what a perfect agent can actually reach.
 *
 * W(t, a, s) = best success probability from cell s with t turns and a actions left
 *            = max over sequences q, 1 ≤ |q| ≤ min(K, a), of
 *              P(goal during q) + Σ_s' P(at s' after q, alive) · W(t − 1, a − |q|, s').
 * Sequences are enumerated as a trie (4 + 16 + … + 4^K nodes per cell), carrying the distribution;
 * about 25 ms for a 4×4 map with K = 5 and 10 actions.
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

export function planLakeTurns(map: LakeMap, turns: number, actions: number, perTurn: number, slip = 2 / 3): TurnPlan {
  const n = map.holes.length;
  const size = (turns + 1) * (actions + 1) * n;
  const plan: TurnPlan = {
    turns,
    actions,
    perTurn,
    value: new Float64Array(size),
    sequence: new Int32Array(size),
    length: new Uint8Array(size),
  };
  const maxLength = Math.min(perTurn, actions, 15); // 15: base-4 digits that fit an Int32
  // The outcome distribution of a sequence does not depend on the turns left: enumerate each
  // start cell's trie once, then close turns for every t against W(t − 1, ·, ·).
  const tries: Trie[] = [];
  for (let s = 0; s < n; s++) {
    tries.push(map.holes[s] || s === map.goal ? emptyTrie() : buildTrie(map, s, maxLength, slip));
  }
  const stride = actions + 1;
  for (let t = 1; t <= turns; t++) {
    for (let s = 0; s < n; s++) {
      const trie = tries[s] as Trie;
      for (let node = 0; node < trie.depth.length; node++) {
        const depth = trie.depth[node] as number;
        const from = trie.offset[node] as number;
        const to = trie.offset[node + 1] as number;
        for (let a = depth; a <= actions; a++) {
          const base = ((t - 1) * stride + (a - depth)) * n;
          let v = trie.goal[node] as number;
          for (let k = from; k < to; k++) {
            v += (trie.mass[k] as number) * (plan.value[base + (trie.cell[k] as number)] as number);
          }
          const at = (t * stride + a) * n + s;
          if (v > (plan.value[at] as number) + 1e-12 || plan.length[at] === 0) {
            plan.value[at] = v;
            plan.sequence[at] = trie.code[node] as number;
            plan.length[at] = depth;
          }
        }
      }
    }
  }
  return plan;
}

/** Every sequence from one start cell: length, code, goal probability, sparse distribution of alive cells. */
interface Trie {
  depth: number[];
  code: number[];
  goal: number[];
  /** Node i's cells are cell/mass[offset[i] … offset[i + 1]). */
  offset: number[];
  cell: number[];
  mass: number[];
}

function emptyTrie(): Trie {
  return { depth: [], code: [], goal: [], offset: [0], cell: [], mass: [] };
}

function buildTrie(map: LakeMap, start: number, maxLength: number, slip: number): Trie {
  const n = map.holes.length;
  const outcomes = Array.from({ length: n * 4 }, (_, i) => slipOutcomes(map, Math.floor(i / 4), i % 4, slip));
  const buffers = Array.from({ length: maxLength + 1 }, () => new Float64Array(n));
  const trie = emptyTrie();
  (buffers[0] as Float64Array)[start] = 1;
  const expand = (depth: number, code: number, goalMass: number): void => {
    const dist = buffers[depth] as Float64Array;
    if (depth > 0) {
      trie.depth.push(depth);
      trie.code.push(code);
      trie.goal.push(goalMass);
      for (let c = 0; c < n; c++) {
        if (dist[c]) {
          trie.cell.push(c);
          trie.mass.push(dist[c] as number);
        }
      }
      trie.offset.push(trie.cell.length);
    }
    if (depth === maxLength) return;
    const next = buffers[depth + 1] as Float64Array;
    for (let action = 0; action < 4; action++) {
      next.fill(0);
      let reached = goalMass;
      for (let c = 0; c < n; c++) {
        const mass = dist[c] as number;
        if (!mass) continue;
        const { cells, weights, divisor } = outcomes[c * 4 + action] as SlipOutcomes;
        cells.forEach((o, k) => {
          const share = (mass * (weights[k] as number)) / divisor;
          if (o === map.goal) reached += share;
          else if (!map.holes[o]) next[o] = (next[o] as number) + share;
        });
      }
      expand(depth + 1, code + action * 4 ** depth, reached);
    }
  };
  expand(0, 0, 0);
  return trie;
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
