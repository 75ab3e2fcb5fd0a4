/**
 * Every seed a run derives, each a pure function of the config and its position, so a resumed run (either
 * driver) replays the same levels and samples the same tokens.
 */
import type { RlConfig } from './config.ts';

/**
 * A group's level seed is a pure function of (run seed, iteration, group), so a resumed run replays the
 * same levels. Groups ≥ envGroups are DAPO's extra samples. Training seeds stay below the
 * demonstration (1e9) and validation (2e9) ranges for iterations < 15,000 and groups < 65,536.
 */
export function trainSeed(c: RlConfig, iteration: number, group: number): number {
  return (c.seed * 1_000_003 + iteration * 65_536 + group) >>> 0;
}

export function trainSeeds(c: RlConfig, iteration: number): number[] {
  return Array.from({ length: c.envGroups }, (_, g) => trainSeed(c, iteration, g));
}

/** Validation seeds: fixed for the run and disjoint from the training range (which starts near 0). */
export function validationSeeds(c: RlConfig): number[] {
  return Array.from({ length: c.valSeeds }, (_, i) => 2_000_000_000 + i);
}

/** The sampling stream of an iteration's rollout. */
export const samplingSeed = (c: RlConfig, iteration: number): number => (c.seed * 7919 + iteration * 104_729) >>> 0;

/** The sampling stream of validation: the same at every iteration, so validations differ only by the policy. */
export const VALIDATION_SAMPLING_SEED = 777;
