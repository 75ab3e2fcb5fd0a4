import { actionHorizon, checkBudget, checkInteger, checkNumber } from '../common.ts';
import { ConfigError } from '../../errors.ts';
import { Prng } from '../prng.ts';
import type { EnvDefinition } from '../types.ts';
import { FrozenLakeEnv, slipOf, type FrozenLakeConfig } from './env.ts';
import { checkObservationFormat } from '../coordinates.ts';
import { LAKE_ACTIONS, generateLakeMap, parseLakeMap, type LakeMap } from './map.ts';
import { bestSequence, planLakeTurns, planValue, type TurnPlan } from './turn-planner.ts';
import { bestAction, lakeValueIteration, successProbability } from './value-iteration.ts';

export { FrozenLakeEnv, slipOf, type FrozenLakeConfig } from './env.ts';

/** Beyond 4^6 sequences per turn the exact planner gets slow; the closed-loop ceiling is used instead. */
const MAX_PLANNED_TURN_LENGTH = 6;
const PLAN_CACHE_SIZE = 256;
const planCache = new Map<string, TurnPlan>();

/** The exact turn-structured plan for a map under a config's budget (cached: experts ask every turn). */
function turnPlan(map: LakeMap, c: FrozenLakeConfig): TurnPlan | null {
  const actions = Math.min(actionHorizon(c), c.maxSteps);
  if (Math.min(c.maxActionsPerTurn, actions) > MAX_PLANNED_TURN_LENGTH) return null;
  const key = [map.size, map.holes.join(''), map.goal, c.maxTurns, actions, c.maxActionsPerTurn, slipOf(c)].join(':');
  let plan = planCache.get(key);
  if (!plan) {
    plan = planLakeTurns(map, c.maxTurns, actions, c.maxActionsPerTurn, slipOf(c));
    if (planCache.size >= PLAN_CACHE_SIZE) planCache.delete(planCache.keys().next().value as string);
    planCache.set(key, plan);
  }
  return plan;
}

/** Registry entry. Defaults = the paper's FrozenLake: 4×4, p = 0.8, slippery (2/3), 5 turns × 5 actions, 10 actions. */
export const FROZENLAKE: EnvDefinition<FrozenLakeConfig> = {
  defaults: {
    type: 'frozenlake',
    size: 4,
    pFrozen: 0.8,
    slippery: true,
    slipProbability: 2 / 3,
    observation: 'grid',
    maxSteps: 100,
    maxTurns: 5,
    maxActionsPerTurn: 5,
    maxActionsPerTrajectory: 10,
  },
  validate(c) {
    checkBudget(c);
    checkInteger('env.size', c.size, 2, 32);
    checkNumber('env.pFrozen', c.pFrozen, 0.05, 1);
    if (typeof c.slippery !== 'boolean') throw new ConfigError('env.slippery', 'must be true or false');
    checkNumber('env.slipProbability', c.slipProbability, 0, 1);
    checkObservationFormat('env.observation', c.observation);
    checkInteger('env.maxSteps', c.maxSteps, 1, 100000);
  },
  create: (c) => new FrozenLakeEnv(c),
  /**
   * success: the best probability a perfect agent reaches under the protocol (actions of one turn
   * are committed blind; the state is seen between turns). detail.closedLoop: value iteration
   * with the state seen after every action, a looser ceiling (used alone when turns are too long to plan).
   */
  oracle(c, seed) {
    const map = generateLakeMap(new Prng(seed), c.size, c.pFrozen);
    const horizon = Math.min(actionHorizon(c), c.maxSteps);
    const closedLoop = successProbability(lakeValueIteration(map, horizon, slipOf(c)), map);
    const plan = turnPlan(map, c);
    const exact = plan ? planValue(plan, c.maxTurns, horizon, map.start, map.holes.length) : closedLoop;
    return { success: exact, detail: { closedLoop, exact: plan !== null, horizon } };
  },
  expert(c, snapshot, left) {
    const map = parseLakeMap(snapshot.grid as string[]);
    const actionsLeft = Math.min(left.actionsLeft, c.maxSteps - (snapshot.steps as number));
    if (actionsLeft <= 0 || left.turnsLeft <= 0) return [];
    const plan = turnPlan(map, c);
    if (plan) {
      if (planValue(plan, left.turnsLeft, actionsLeft, map.start, map.holes.length) === 0) return [];
      const sequence = bestSequence(plan, left.turnsLeft, actionsLeft, map.start, map.holes.length);
      return sequence.map((a) => LAKE_ACTIONS[a] as string);
    }
    // Turns too long to plan: one action per turn, so that every action sees the state.
    const horizon = Math.min(left.turnsLeft, actionsLeft);
    const values = lakeValueIteration(map, horizon, slipOf(c));
    return [LAKE_ACTIONS[bestAction(values, map, map.start, horizon)] as string];
  },
};
