import { StarpoError } from '../../errors.ts';
import type { Prng } from '../prng.ts';
import { applyOp, fraction, type Fraction } from './expression.ts';

/**
 * Procedural Countdown instances that are solvable by construction: draw the numbers, combine them
 * in a random order with random operators, and use the result as the target when it is an integer
 * in range (otherwise draw again). The solver checks the construction in tests.
 */
export interface CountdownInstance {
  target: number;
  numbers: number[];
}

export interface CountdownOptions {
  minNumbers: number;
  maxNumbers: number;
  /** Numbers are drawn uniformly from [1, maxNumber]. */
  maxNumber: number;
  minTarget: number;
  maxTarget: number;
}

const MAX_DRAWS = 100_000;
const OPS = ['+', '-', '*', '/'] as const;

export function generateCountdown(rng: Prng, o: CountdownOptions): CountdownInstance {
  for (let draw = 0; draw < MAX_DRAWS; draw++) {
    const count = rng.range(o.minNumbers, o.maxNumbers);
    const numbers = Array.from({ length: count }, () => rng.range(1, o.maxNumber));
    const result = combineRandomly(rng, numbers);
    if (!result || result.den !== 1n) continue;
    const target = Number(result.num);
    if (target >= o.minTarget && target <= o.maxTarget) return { target, numbers };
  }
  throw new StarpoError(`countdown: no instance in range after ${MAX_DRAWS} draws`, { details: { ...o } });
}

/** Folds the numbers into one value in a random order with random operators; null on a division by zero. */
function combineRandomly(rng: Prng, numbers: readonly number[]): Fraction | null {
  const pool: Fraction[] = numbers.map((n) => fraction(BigInt(n)));
  while (pool.length > 1) {
    const a = pool.splice(rng.int(pool.length), 1)[0] as Fraction;
    const b = pool.splice(rng.int(pool.length), 1)[0] as Fraction;
    const value = applyOp(rng.pick(OPS), a, b);
    if (!value) return null;
    pool.push(value);
  }
  return pool[0] as Fraction;
}
