import { StarpoError } from '../errors.ts';
import { envDefinition, resolveEnvConfig, type EnvConfigInput } from './registry.ts';
import type { Json } from './types.ts';

/**
 * The ceiling learning results are compared against: per seed, the best success probability any
 * policy can reach under the config's budget (Sokoban: a shortest solution fits; FrozenLake: value
 * iteration, a ceiling when several actions share a turn; Bandit: pull the high arm; Countdown: solvable).
 */
export interface OracleSummary {
  env: string;
  seeds: number;
  /** Mean over seeds of the per-seed best success probability. */
  successRate: number;
  perSeed: Array<{ seed: number; success: number; detail: { [key: string]: Json } }>;
}

export function oracleSuccess(config: EnvConfigInput, seeds: readonly number[]): OracleSummary {
  const resolved = resolveEnvConfig(config);
  const definition = envDefinition(resolved);
  if (!definition.oracle) throw new StarpoError(`${resolved.type}: no oracle registered`);
  const perSeed = seeds.map((seed) => ({ seed, ...definition.oracle!(resolved, seed) }));
  const total = perSeed.reduce((sum, r) => sum + r.success, 0);
  return { env: resolved.type, seeds: seeds.length, successRate: seeds.length ? total / seeds.length : 0, perSeed };
}
