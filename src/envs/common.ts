import { ConfigError, StarpoError } from '../errors.ts';
import type { Budget } from './types.ts';

/** Model text to a canonical action name, matched case-insensitively (docs/spec.md §3). */
export function vocabularyMatcher(names: readonly string[]): (text: string) => string | null {
  const byLower = new Map(names.map((name) => [name.toLowerCase(), name]));
  return (text) => byLower.get(text.trim().toLowerCase()) ?? null;
}

export function checkInteger(field: string, value: unknown, min: number, max: number): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(field, `must be an integer in [${min}, ${max}], got ${String(value)}`);
  }
}

export function checkNumber(field: string, value: unknown, min: number, max: number): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw new ConfigError(field, `must be a number in [${min}, ${max}], got ${String(value)}`);
  }
}

export function checkBudget(budget: Budget): void {
  checkInteger('env.maxTurns', budget.maxTurns, 1, 1000);
  checkInteger('env.maxActionsPerTurn', budget.maxActionsPerTurn, 1, 1000);
  checkInteger('env.maxActionsPerTrajectory', budget.maxActionsPerTrajectory, 1, 100000);
}

/** Actions an agent can execute at most in one episode under `budget`. */
export function actionHorizon(budget: Budget): number {
  return Math.min(budget.maxActionsPerTrajectory, budget.maxTurns * budget.maxActionsPerTurn);
}

export function episodeOver(type: string): StarpoError {
  return new StarpoError(`${type}: step() after the episode ended; call reset(seed) first`);
}
