/**
 * What the report needs to know about a run's environment, derived from its saved config: the symbol
 * legend (so grids render in the vocabulary actually used, e.g. the re-vocabulary Sokoban) and the
 * oracle ceiling over the run's validation seeds, with the run's budget overrides applied.
 */
import { createEnv, oracleSuccess, type EnvConfig } from '../envs/index.ts';
import { validationSeeds } from '../rl/seeds.ts';
import { runEnvConfig } from '../rl/run-env.ts';
import type { RlConfig } from '../rl/config.ts';
import { log } from '../log.ts';
import type { LegendEntry, OracleCeiling } from './model.ts';

export interface EnvInfo {
  /** The environment config with the run's budget applied; null when the config names none known. */
  env: EnvConfig | null;
  legend: LegendEntry[];
  oracle: OracleCeiling | null;
}

/** 'player on target' → 'player-on-target': a class name the page styles (unknown meanings get a default). */
export function styleSlug(meaning: string): string {
  return meaning
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

function envConfigOf(config: Partial<RlConfig>): EnvConfig {
  return runEnvConfig({ ...config, env: config.env ?? 'sokoban' });
}

// The oracle solves every validation level (Sokoban: a search per seed), so a dashboard polling every
// few seconds must not redo it: results are kept per (environment config, seed count).
const oracleCache = new Map<string, OracleCeiling | null>();

function oracleOf(env: EnvConfig, valSeeds: number, config: Partial<RlConfig>): OracleCeiling | null {
  const key = `${JSON.stringify(env)}#${valSeeds}`;
  if (!oracleCache.has(key)) {
    let ceiling: OracleCeiling | null = null;
    try {
      const seeds = validationSeeds({ ...config, valSeeds } as RlConfig);
      ceiling = { successRate: oracleSuccess(env, seeds).successRate, seeds: seeds.length };
    } catch (err) {
      // An environment without an oracle simply has no ceiling line.
      log.debug({ env: env.type, err: (err as Error).message }, 'no oracle ceiling for the report');
    }
    oracleCache.set(key, ceiling);
  }
  return oracleCache.get(key)!;
}

/** Legend and oracle ceiling of a run; an unknown or missing environment (or an external agent) gives neither. */
export function envInfo(config: Partial<RlConfig>): EnvInfo {
  // An external agent's episodes play no built-in environment: no grid legend, no oracle ceiling.
  if (config.agent) return { env: null, legend: [], oracle: null };
  let env: EnvConfig;
  try {
    env = envConfigOf(config);
  } catch {
    return { env: null, legend: [], oracle: null };
  }
  const legend = createEnv(env)
    .describe()
    .legend.map(([symbol, meaning]) => ({ symbol, meaning, style: styleSlug(meaning) }));
  const valSeeds = config.valSeeds ?? 0;
  return { env, legend, oracle: valSeeds > 0 ? oracleOf(env, valSeeds, config) : null };
}
