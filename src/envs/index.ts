/** Environments: the registry, the contract, the oracles. */
export { ENVS, ENV_PRESETS, createEnv, envDefinition, resolveEnvConfig } from './registry.ts';
export type { EnvConfig, EnvConfigInput, EnvType } from './registry.ts';
export { oracleSuccess, type OracleSummary } from './oracle.ts';
export { Prng } from './prng.ts';
export { envSpecId } from './spec-id.ts';
export type {
  Budget,
  Env,
  EnvConfigBase,
  EnvDefinition,
  EnvSnapshot,
  StepInfo,
  StepResult,
  TaskDescription,
} from './types.ts';
