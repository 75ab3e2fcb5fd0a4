import { ConfigError } from '../errors.ts';

/**
 * The one random number generator of every environment: xoshiro128** seeded through splitmix32.
 * Only 32-bit integer arithmetic (Math.imul, shifts), so a seed gives the same stream in every
 * process and on every machine — unlike Math.random or any hash that depends on the process.
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

export class Prng {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

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
    this.s0 = next();
    this.s1 = next();
    this.s2 = next();
    this.s3 = next();
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1; // the all-zero state is a fixed point
  }

  /** Uniform 32-bit unsigned integer. */
  nextU32(): number {
    const s1 = this.s1;
    const r = Math.imul(rotl(Math.imul(s1, 5), 7), 9) >>> 0;
    const t = s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return r;
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

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}
