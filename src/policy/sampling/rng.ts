/**
 * The sampling PRNG: xoshiro128** (src/random/xoshiro128.ts) seeded through SplitMix64, as the xoshiro
 * authors recommend; the same sequence in every process and on every platform. The state serialises to 32
 * hex characters for checkpoints.
 */
import { CorruptDataError, StarpoError } from '../../errors.ts';
import { Xoshiro128 } from '../../random/xoshiro128.ts';

const MASK64 = (1n << 64n) - 1n;

export class SamplingRng extends Xoshiro128 {
  private constructor(s0: number, s1: number, s2: number, s3: number) {
    super(s0, s1, s2, s3);
  }

  /**
   * A generator for (seed, stream): different streams of one seed are independent, so each rollout shard or
   * sequence can draw from its own without coordination.
   */
  static fromSeed(seed: number, stream = 0): SamplingRng {
    if (!Number.isSafeInteger(seed) || !Number.isSafeInteger(stream)) {
      throw new StarpoError(`rng seed ${seed} and stream ${stream} must be safe integers`);
    }
    // SplitMix64 expands the 64-bit seed into the 128-bit state, as the xoshiro authors recommend.
    let x = (BigInt.asUintN(64, BigInt(seed)) ^ (BigInt.asUintN(64, BigInt(stream)) * 0xd1342543de82ef95n)) & MASK64;
    const words: number[] = [];
    for (let i = 0; i < 2; i++) {
      x = (x + 0x9e3779b97f4a7c15n) & MASK64;
      let z = x;
      z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
      z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK64;
      z ^= z >> 31n;
      words.push(Number(z & 0xffffffffn), Number(z >> 32n));
    }
    return new SamplingRng(words[0] | 0, words[1] | 0, words[2] | 0, words[3] | 0);
  }

  /** Restores a generator from getState(); a malformed state is corrupt checkpoint data. */
  static fromState(state: string): SamplingRng {
    if (!/^[0-9a-f]{32}$/.test(state) || /^0+$/.test(state)) {
      throw new CorruptDataError(`rng state ${JSON.stringify(state)} is not 32 hex digits (not all zero)`);
    }
    const w = [0, 8, 16, 24].map((i) => Number.parseInt(state.slice(i, i + 8), 16) | 0);
    return new SamplingRng(w[0], w[1], w[2], w[3]);
  }

  getState(): string {
    return this.words()
      .map((w) => w.toString(16).padStart(8, '0'))
      .join('');
  }

  clone(): SamplingRng {
    return new SamplingRng(this.s0, this.s1, this.s2, this.s3);
  }
}
