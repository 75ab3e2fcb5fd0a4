import { moveOnLake, type LakeMap } from './map.ts';

/**
 * Finite-horizon value iteration on a slippery FrozenLake map: the best probability of reaching the
 * goal within `horizon` actions, and the policy that achieves it. It assumes the agent sees the state
 * after every action, so for turns holding several actions it is a ceiling (an upper bound).
 *
 * value[k * n + s] = best success probability from cell s with k actions left.
 * policy[k * n + s] = the action (index into LAKE_ACTIONS) that achieves it (lowest index on ties).
 */
export interface LakeValues {
  horizon: number;
  value: Float64Array;
  policy: Uint8Array;
}

/**
 * Where an action can take the player: cells with weights; outcome k has probability weights[k] / divisor.
 * With slip probability p the perpendicular moves get p/2 each and the intended one 1 − p; at p = 2/3
 * (gym's rule) the three are equal and written 1/3 as weight 1 over divisor 3, so values come out as the
 * same doubles as before slip probabilities were configurable. At p = 0 only the intended move remains.
 */
export interface SlipOutcomes {
  cells: number[];
  weights: number[];
  divisor: number;
}

export function slipOutcomes(map: LakeMap, cell: number, action: number, slip = 2 / 3): SlipOutcomes {
  const straight = moveOnLake(map.size, cell, action);
  if (slip === 0) return { cells: [straight], weights: [1], divisor: 1 };
  const cells = [moveOnLake(map.size, cell, (action + 3) % 4), straight, moveOnLake(map.size, cell, (action + 1) % 4)];
  if (slip === 2 / 3) return { cells, weights: [1, 1, 1], divisor: 3 };
  return { cells, weights: [slip / 2, 1 - slip, slip / 2], divisor: 1 };
}

/** `slip`: the slip probability in effect (0 = not slippery). */
export function lakeValueIteration(map: LakeMap, horizon: number, slip = 2 / 3): LakeValues {
  const n = map.holes.length;
  const value = new Float64Array((horizon + 1) * n);
  const policy = new Uint8Array((horizon + 1) * n);
  for (let k = 1; k <= horizon; k++) {
    for (let s = 0; s < n; s++) {
      if (map.holes[s] || s === map.goal) continue; // terminal: the episode already ended
      let best = -1;
      for (let a = 0; a < 4; a++) {
        let v = 0;
        const { cells, weights, divisor } = slipOutcomes(map, s, a, slip);
        cells.forEach((next, o) => {
          const after = next === map.goal ? 1 : map.holes[next] ? 0 : (value[(k - 1) * n + next] as number);
          v += (after * (weights[o] as number)) / divisor;
        });
        if (v > best + 1e-12) {
          best = v;
          policy[k * n + s] = a;
        }
      }
      value[k * n + s] = best;
    }
  }
  return { horizon, value, policy };
}

export function successProbability(values: LakeValues, map: LakeMap, actionsLeft = values.horizon): number {
  return values.value[actionsLeft * map.holes.length + map.start] as number;
}

export function bestAction(values: LakeValues, map: LakeMap, cell: number, actionsLeft: number): number {
  return values.policy[Math.min(actionsLeft, values.horizon) * map.holes.length + cell] as number;
}
