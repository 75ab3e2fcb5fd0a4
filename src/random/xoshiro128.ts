/**
 * xoshiro128** (Blackman & Vigna): the one generator step behind every seeded stream in starpo
 * (environments, sampling). Four int32 words of state and only 32-bit integer arithmetic
 * (Math.imul, shifts), so a state gives the same sequence in every process and on every machine.
 * Subclasses differ only in how a seed becomes the state.
 */
export class Xoshiro128 {
  protected constructor(
    protected s0: number,
    protected s1: number,
    protected s2: number,
    protected s3: number,
  ) {
    // The all-zero state is a fixed point of the generator.
    if ((s0 | s1 | s2 | s3) === 0) this.s0 = 1;
  }

  /** The next 32 random bits as an unsigned integer. */
  nextU32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5), 7), 9);
    const t = this.s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return result >>> 0;
  }

  /** A uniform double in [0, 1) with 53 random bits (two draws), fine enough for tokens of tiny probability. */
  next(): number {
    const hi = this.nextU32() >>> 5;
    const lo = this.nextU32() >>> 6;
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  /** The state as four unsigned 32-bit words. */
  protected words(): [number, number, number, number] {
    return [this.s0 >>> 0, this.s1 >>> 0, this.s2 >>> 0, this.s3 >>> 0];
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}
