import { resolveEnvConfig, type EnvConfig } from '../envs/index.ts';
import type { RlConfig } from './config-fields.ts';
import { withBudget } from './rollout.ts';

/** The environment a run plays: its preset with the run's budget overrides applied. */
export function runEnvConfig(c: RlConfig): EnvConfig {
  return withBudget(resolveEnvConfig(c.env), {
    maxTurns: c.maxTurns, maxActionsPerTurn: c.maxActionsPerTurn, maxActionsPerTrajectory: c.maxActionsPerTrajectory,
  });
}
