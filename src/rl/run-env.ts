import { envSpecId, resolveEnvConfig, type EnvConfig } from '../envs/index.ts';
import type { RlConfig } from './config-fields.ts';
import { withBudget } from './rollout.ts';

type Budget = Partial<Pick<RlConfig, 'maxTurns' | 'maxActionsPerTurn' | 'maxActionsPerTrajectory'>>;

/** The environment a run plays: its preset with the run's budget overrides applied (absent or 0 = the preset's). */
export function runEnvConfig(c: Pick<RlConfig, 'env'> & Budget): EnvConfig {
  return withBudget(resolveEnvConfig(c.env), {
    maxTurns: c.maxTurns,
    maxActionsPerTurn: c.maxActionsPerTurn,
    maxActionsPerTrajectory: c.maxActionsPerTrajectory,
  });
}

/** The spec id of the environment a run plays (success figures compare only under equal ones). */
export function runEnvSpecId(c: Pick<RlConfig, 'env'> & Budget): string {
  return envSpecId(runEnvConfig(c));
}
