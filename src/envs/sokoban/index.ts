import { actionHorizon, checkBudget, checkInteger } from '../common.ts';
import { checkObservationFormat } from '../coordinates.ts';
import { ConfigError } from '../../errors.ts';
import type { EnvDefinition } from '../types.ts';
import { SokobanEnv, sokobanLevel, type SokobanConfig } from './env.ts';
import { SOKOBAN_GENERATORS } from './generate.ts';
import { VOCABULARIES, parseLevel } from './level.ts';
import { solveSokoban } from './solver.ts';

export { SokobanEnv, sokobanLevel, type SokobanConfig } from './env.ts';

/**
 * Registry entry. Defaults = the paper's Simple Sokoban: 6×6, one box, 5 turns × 5 actions, 10 actions,
 * levels generated as RAGEN generates them (comparable with its published numbers).
 */
export const SOKOBAN: EnvDefinition<SokobanConfig> = {
  defaults: {
    type: 'sokoban',
    width: 6,
    height: 6,
    boxes: 1,
    searchDepth: 300,
    generator: 'ragen',
    maxSteps: 100,
    vocabulary: 'standard',
    observation: 'grid',
    maxTurns: 5,
    maxActionsPerTurn: 5,
    maxActionsPerTrajectory: 10,
  },
  optional: ['coordinateWalls'],
  validate(c) {
    checkBudget(c);
    checkInteger('env.width', c.width, 3, 64);
    checkInteger('env.height', c.height, 3, 64);
    // Packed state keys hold 8 bits per cell index and at most 6 indices in a float64's 53 bits.
    if (c.width * c.height > 256) throw new ConfigError('env.width', 'width × height must be at most 256');
    checkInteger('env.boxes', c.boxes, 1, 5);
    checkInteger('env.searchDepth', c.searchDepth, 2, 100000);
    checkInteger('env.maxSteps', c.maxSteps, 1, 100000);
    if (!(c.vocabulary in VOCABULARIES))
      throw new ConfigError('env.vocabulary', `unknown vocabulary "${c.vocabulary}"`);
    checkObservationFormat('env.observation', c.observation);
    if (c.coordinateWalls !== undefined && typeof c.coordinateWalls !== 'boolean') {
      throw new ConfigError('env.coordinateWalls', `must be true or false, got ${JSON.stringify(c.coordinateWalls)}`);
    }
    if (!SOKOBAN_GENERATORS.includes(c.generator)) {
      throw new ConfigError(
        'env.generator',
        `must be one of ${SOKOBAN_GENERATORS.join(', ')}, got ${String(c.generator)}`,
      );
    }
  },
  create: (c) => new SokobanEnv(c),
  /** Deterministic: success 1 iff a shortest solution fits within the action budget and the step cap. */
  oracle(c, seed) {
    const level = sokobanLevel(c, seed);
    const solution = solveSokoban(level, { maxDepth: c.maxSteps });
    const horizon = Math.min(actionHorizon(c), c.maxSteps);
    const shortest = solution ? solution.length : null;
    return { success: shortest !== null && shortest <= horizon ? 1 : 0, detail: { shortest, horizon } };
  },
  expert(c, snapshot, left) {
    const grid = snapshot.grid as string[];
    const steps = snapshot.steps as number;
    const plan = solveSokoban(parseLevel(grid), { maxDepth: c.maxSteps - steps }) ?? [];
    return plan.slice(0, Math.min(left.maxActionsPerTurn, left.actionsLeft));
  },
};
