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

/** Each action moves in the intended direction or either perpendicular one, 1/3 each (gym's slip rule). */
export function slipOutcomes(map: LakeMap, cell: number, action: number, slippery = true): number[] {
  if (!slippery) return [moveOnLake(map.size, cell, action)];
  return [
    moveOnLake(map.size, cell, (action + 3) % 4),
    moveOnLake(map.size, cell, action),
    moveOnLake(map.size, cell, (action + 1) % 4),
  ];
}

export function lakeValueIteration(map: LakeMap, horizon: number, slippery = true): LakeValues {
  const n = map.holes.length;
  const value = new Float64Array((horizon + 1) * n);
  const policy = new Uint8Array((horizon + 1) * n);
  for (let k = 1; k <= horizon; k++) {
    for (let s = 0; s < n; s++) {
      if (map.holes[s] || s === map.goal) continue; // terminal: the episode already ended
      let best = -1;
      for (let a = 0; a < 4; a++) {
        let v = 0;
        const outcomes = slipOutcomes(map, s, a, slippery);
        for (const next of outcomes) {
          v += (next === map.goal ? 1 : map.holes[next] ? 0 : (value[(k - 1) * n + next] as number)) / outcomes.length;
        }
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
