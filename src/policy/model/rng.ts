/**
 * The seeded random stream used for parameter initialisation and sampling: the same seed gives
 * the same numbers on every platform and in every thread (no Math.random).
 */
/** xoshiro128** (public domain): small, fast, and identical on every platform. */
export class Rng {
  private s: Uint32Array;
  constructor(seed: number) {
    this.s = new Uint32Array(4);
    let z = seed >>> 0;
    for (let i = 0; i < 4; i++) {
      z = (z + 0x9e3779b9) >>> 0; // splitmix32 fills the state so nearby seeds diverge
      let t = z;
      t = Math.imul(t ^ (t >>> 16), 0x85ebca6b);
      t = Math.imul(t ^ (t >>> 13), 0xc2b2ae35);
      this.s[i] = (t ^ (t >>> 16)) >>> 0;
    }
  }
  nextU32(): number {
    const s = this.s;
    const r = Math.imul(rotl(Math.imul(s[1], 5), 7), 9) >>> 0;
    const t = s[1] << 9;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 11);
    return r;
  }
  /** Uniform in [0, 1) with 53 random bits. */
  next(): number {
    return ((this.nextU32() >>> 5) * 67108864 + (this.nextU32() >>> 6)) / 9007199254740992;
  }
  normal(): number {
    const u = 1 - this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next());
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}
