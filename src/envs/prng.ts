import { ConfigError } from '../errors.ts';
import { Xoshiro128 } from '../random/xoshiro128.ts';

/**
 * The one random number generator of every environment: xoshiro128** (src/random/xoshiro128.ts)
 * seeded through splitmix32, so a seed gives the same stream in every process and on every machine —
 * unlike Math.random or any hash that depends on the process.
 */
const TWO_POW_32 = 4294967296;

function mix32(x: number): number {
  let z = (x + 0x9e3779b9) | 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

/** Throws unless `seed` is a non-negative safe integer (the only seeds an environment accepts). */
export function checkSeed(seed: number): void {
  if (!Number.isSafeInteger(seed) || seed < 0) {
    throw new ConfigError('seed', `must be a non-negative safe integer, got ${String(seed)}`);
  }
}

export class Prng extends Xoshiro128 {
  /**
   * `stream` separates independent uses of one seed (e.g. level layout vs. slip outcomes), so
   * consuming more numbers in one never shifts the other.
   */
  constructor(seed: number, stream = 0) {
    checkSeed(seed);
    const lo = seed >>> 0;
    const hi = Math.floor(seed / TWO_POW_32) >>> 0;
    let h = mix32(lo ^ mix32(hi ^ mix32(stream + 0x5eed)));
    const next = (): number => {
      h = (h + 0x6d2b79f5) | 0;
      return mix32(h);
    };
    const [s0, s1, s2, s3] = [next(), next(), next(), next()];
    super(s0, s1, s2, s3);
  }

  /** Uniform float in [0, 1) with 32 bits of resolution. */
  float(): number {
    return this.nextU32() / TWO_POW_32;
  }

  /** Uniform integer in [0, n). Multiply-high mapping: exact, deterministic, bias < n / 2^32. */
  int(n: number): number {
    return Math.floor((this.nextU32() * n) / TWO_POW_32);
  }

  /** Uniform integer in [lo, hi] (both inclusive). */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }

  /** Fisher–Yates shuffle of a copy. */
  shuffled<T>(items: readonly T[]): T[] {
    const out = items.slice();
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const tmp = out[i] as T;
      out[i] = out[j] as T;
      out[j] = tmp;
    }
    return out;
  }
}
