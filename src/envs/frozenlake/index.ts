import { actionHorizon, checkBudget, checkInteger, checkNumber } from '../common.ts';
import { ConfigError } from '../../errors.ts';
import { Prng } from '../prng.ts';
import type { EnvDefinition } from '../types.ts';
import { FrozenLakeEnv, type FrozenLakeConfig } from './env.ts';
import { LAKE_ACTIONS, generateLakeMap, parseLakeMap } from './map.ts';
import { bestAction, lakeValueIteration, successProbability } from './value-iteration.ts';

export { FrozenLakeEnv, type FrozenLakeConfig } from './env.ts';

/** Registry entry. Defaults = the paper's FrozenLake: 4×4, p = 0.8, slippery, 5 turns × 5 actions, 10 actions. */
export const FROZENLAKE: EnvDefinition<FrozenLakeConfig> = {
  defaults: {
    type: 'frozenlake', size: 4, pFrozen: 0.8, slippery: true, maxSteps: 100,
    maxTurns: 5, maxActionsPerTurn: 5, maxActionsPerTrajectory: 10,
  },
  validate(c) {
    checkBudget(c);
    checkInteger('env.size', c.size, 2, 32);
    checkNumber('env.pFrozen', c.pFrozen, 0.05, 1);
    if (typeof c.slippery !== 'boolean') throw new ConfigError('env.slippery', 'must be true or false');
    checkInteger('env.maxSteps', c.maxSteps, 1, 100000);
  },
  create: (c) => new FrozenLakeEnv(c),
  /** Best success probability with the state seen after every action (a ceiling for multi-action turns). */
  oracle(c, seed) {
    const map = generateLakeMap(new Prng(seed), c.size, c.pFrozen);
    const horizon = Math.min(actionHorizon(c), c.maxSteps);
    return { success: successProbability(lakeValueIteration(map, horizon, c.slippery), map), detail: { horizon } };
  },
  /**
   * One action per turn: the optimal action for the horizon left. Committing to several actions
   * without seeing where the ice took you is worse, so the expert spends turns, not actions.
   */
  expert(c, snapshot, left) {
    const map = parseLakeMap(snapshot.grid as string[]);
    const horizon = Math.min(left.turnsLeft, left.actionsLeft, c.maxSteps - (snapshot.steps as number));
    if (horizon <= 0) return [];
    const values = lakeValueIteration(map, horizon, c.slippery);
    return [LAKE_ACTIONS[bestAction(values, map, map.start, horizon)] as string];
  },
};
