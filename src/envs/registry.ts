import { ConfigError } from '../errors.ts';
import { BANDIT } from './bandit.ts';
import { COUNTDOWN } from './countdown/index.ts';
import { FROZENLAKE } from './frozenlake/index.ts';
import { LIBRARY } from './library/index.ts';
import { SOKOBAN } from './sokoban/index.ts';
import { TOOLMATH } from './toolmath/index.ts';
import type { Env, EnvConfigBase, EnvDefinition } from './types.ts';

/**
 * Every environment, by config `type`. Adding one = one module exporting an EnvDefinition and one
 * line here (see README.md in this folder).
 */
export const ENVS = {
  bandit: BANDIT,
  sokoban: SOKOBAN,
  frozenlake: FROZENLAKE,
  countdown: COUNTDOWN,
  toolmath: TOOLMATH,
  library: LIBRARY,
} satisfies Record<string, { defaults: EnvConfigBase; create(config: never): Env }>;

export type EnvType = keyof typeof ENVS;
/** A complete config of any registered environment (a discriminated union on `type`). */
export type EnvConfig = { [K in EnvType]: (typeof ENVS)[K]['defaults'] }[EnvType];

/** Named configs: the paper's variants. Each is a partial config merged over its type's defaults. */
export const ENV_PRESETS: Record<string, { type: EnvType } & Record<string, unknown>> = {
  bandit: { type: 'bandit' },
  'bandit-test': { type: 'bandit', lowArm: 'Trader', highArm: 'Librarian' },
  'bandit-engineer': { type: 'bandit', lowArm: 'Engineer', highArm: 'Teacher' },
  /** Roles swapped: the name that sounds risky-and-rich is the safe arm. */
  'bandit-reversed': { type: 'bandit', lowArm: 'Dragon', highArm: 'Phoenix' },
  /** Simple Sokoban, levels as RAGEN generates them (the default generator). */
  sokoban: { type: 'sokoban' },
  /** gym-sokoban's levels: no player walk after reverse play, so markedly easier (src/envs/README.md). */
  'sokoban-gym': { type: 'sokoban', generator: 'gym-sokoban' },
  /** RAGEN's LargerSokoban: 8×8, 2 boxes, its reverse-play depth limit of 10 (config/envs.yaml there). */
  'sokoban-large': { type: 'sokoban', width: 8, height: 8, boxes: 2, searchDepth: 10 },
  'sokoban-large-gym': { type: 'sokoban', width: 8, height: 8, boxes: 2, generator: 'gym-sokoban' },
  'sokoban-revocab': { type: 'sokoban', vocabulary: 'alternative' },
  /**
   * RAGEN-2's CoordSokoban: the grid plus the zero-indexed coordinates of targets, boxes and player (no walls, as
   * RAGEN-2's collect_entity_coordinates; coordinateWalls is explicit, so the id is not the one this preset had when it
   * listed the walls).
   */
  'coord-sokoban': { type: 'sokoban', observation: 'grid-coord', coordinateWalls: false },
  /** The same with the walls listed too (starpo's rendering before it matched RAGEN-2): prompts about twice as long. */
  'coord-sokoban-walls': { type: 'sokoban', observation: 'grid-coord', coordinateWalls: true },
  /** RAGEN (v1) and the paper: slips 2/3 of the time (1/3 each perpendicular way). */
  frozenlake: { type: 'frozenlake' },
  'frozenlake-noslip': { type: 'frozenlake', slipProbability: 0 },
  /**
   * RAGEN-2's CoordFrozenLake as in its main table: coordinates in the observation, no slipping, and its
   * FrozenLakeEnvConfig's p(frozen) = 0.9; `-slip2` is its 2% point of the slip sweep.
   */
  'coord-frozenlake': { type: 'frozenlake', observation: 'grid-coord', slipProbability: 0, pFrozen: 0.9 },
  'coord-frozenlake-slip2': { type: 'frozenlake', observation: 'grid-coord', slipProbability: 0.02, pFrozen: 0.9 },
  countdown: { type: 'countdown' },
  toolmath: { type: 'toolmath' },
  /** Large-number products only: the one-line solution is short enough for a tiny model trained from scratch. */
  'toolmath-multiply': { type: 'toolmath', kinds: ['multiply'] },
  library: { type: 'library' },
};

/** A preset name, a complete config, or a partial config `{ type, ...overrides }`. */
export type EnvConfigInput = string | EnvConfig | ({ type: string } & Record<string, unknown>);

function definitionOf(type: string): EnvDefinition<EnvConfig> {
  if (!Object.hasOwn(ENVS, type)) {
    throw new ConfigError('env.type', `unknown environment "${type}"; known: ${Object.keys(ENVS).join(', ')}`);
  }
  return ENVS[type as EnvType] as unknown as EnvDefinition<EnvConfig>;
}

/** The registry entry of a config's type. */
export function envDefinition(config: { type: string }): EnvDefinition<EnvConfig> {
  return definitionOf(config.type);
}

/**
 * A complete, validated config from a preset name or a partial config ({ type, ...overrides }).
 * Unknown keys are rejected so that a misspelt knob cannot be silently ignored.
 */
export function resolveEnvConfig(input: EnvConfigInput): EnvConfig {
  const partial: ({ type: string } & Record<string, unknown>) | undefined =
    typeof input === 'string' ? (Object.hasOwn(ENV_PRESETS, input) ? ENV_PRESETS[input] : undefined) : { ...input };
  if (!partial) {
    throw new ConfigError('env', `unknown preset "${String(input)}"; known: ${Object.keys(ENV_PRESETS).join(', ')}`);
  }
  const definition = definitionOf(partial.type);
  for (const key of Object.keys(partial)) {
    if (!Object.hasOwn(definition.defaults, key) && !definition.optional?.includes(key))
      throw new ConfigError(`env.${key}`, `not a ${partial.type} setting`);
  }
  const config = { ...definition.defaults, ...partial } as EnvConfig;
  definition.validate(config);
  return config;
}

/** A fresh environment for a (preset name or) config; call reset(seed) before use. */
export function createEnv(input: EnvConfigInput): Env {
  const config = resolveEnvConfig(input);
  return envDefinition(config).create(config);
}
