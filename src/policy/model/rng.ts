/**
 * The seeded random stream used for parameter initialisation: the same seed gives the same numbers on
 * every platform and in every thread (no Math.random). The generator step is the shared xoshiro128**
 * (src/random/xoshiro128.ts); this class adds its seeding and the normal draws.
 */
import { Xoshiro128 } from '../../random/xoshiro128.ts';

export class Rng extends Xoshiro128 {
  /** splitmix32 fills the state so nearby seeds diverge. */
  constructor(seed: number) {
    let z = seed >>> 0;
    const words: number[] = [];
    for (let i = 0; i < 4; i++) {
      z = (z + 0x9e3779b9) >>> 0;
      words.push(fmix32(z));
    }
    super(words[0], words[1], words[2], words[3]);
  }

  /**
   * A generator for stream (a, b) of `seed` (e.g. a parameter and a chunk of it): each state word is a
   * chain of fmix32 (a bijection) over the seed, the word's index, a and b, so different keys give
   * unrelated 128-bit states. Chunks of one initialisation can then be drawn in any order, on any thread.
   */
  static forStream(seed: number, a: number, b: number): Rng {
    const rng = new Rng(0);
    const w = [0, 1, 2, 3].map((i) =>
      fmix32(fmix32(fmix32(((seed >>> 0) ^ Math.imul(i + 1, 0x9e3779b9)) >>> 0) ^ a) ^ b),
    );
    [rng.s0, rng.s1, rng.s2, rng.s3] = w;
    if (w.every((x) => x === 0)) rng.s0 = 1; // xoshiro's one forbidden state
    return rng;
  }

  normal(): number {
    const u = 1 - this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next());
  }

  /**
   * Fills out[start, end) with scale · N(0, 1) by Marsaglia & Tsang's ziggurat (128 layers): one 32-bit
   * draw per value on the fast path (97.2% of draws), whose low 7 bits pick the layer and whose upper 25
   * bits are the signed position in it, so the layer and the value come from different bits. Values
   * come in blocks of 4096: the hot loop writes every fast-path value and notes the misses, which the
   * slow path then replaces, drawing after the block's fast draws (a hot loop without calls runs at
   * ~5 ns per value here, twice as fast as one that branches into the slow path; Box-Muller's four
   * draws, log, sqrt and cos per value take ~70 ns). Deterministic on every platform: xoshiro is
   * integer arithmetic, and the tables and the rare slow path use V8's own exp/log.
   */
  fillNormal(out: Float32Array, start: number, end: number, scale: number): void {
    const { kn, wn } = ZIGGURAT;
    const sw = ZIGGURAT_SCRATCH.scaled;
    for (let k = 0; k < 128; k++) sw[k] = scale * wn[k];
    const misses = ZIGGURAT_SCRATCH.misses;
    for (let block = start; block < end; block += ZIGGURAT_BLOCK) {
      const stop = Math.min(end, block + ZIGGURAT_BLOCK);
      // int32 locals throughout (uint32 values above 2^31 would push V8 onto doubles)
      let s0 = this.s0 | 0;
      let s1 = this.s1 | 0;
      let s2 = this.s2 | 0;
      let s3 = this.s3 | 0;
      let missed = 0;
      for (let i = block; i < stop; i++) {
        // xoshiro128** inlined: the same bits as nextU32, as a signed int
        const x = Math.imul(s1, 5);
        const r = Math.imul((x << 7) | (x >>> 25), 9);
        const t = s1 << 9;
        s2 ^= s0;
        s3 ^= s1;
        s1 ^= s2;
        s0 ^= s3;
        s2 ^= t;
        s3 = (s3 << 11) | (s3 >>> 21);
        const layer = r & 127;
        const hz = r >> 7; // signed 25 bits
        out[i] = hz * sw[layer];
        if (Math.abs(hz) >= kn[layer]) {
          misses[missed++] = i;
          misses[missed++] = r;
        }
      }
      this.s0 = s0;
      this.s1 = s1;
      this.s2 = s2;
      this.s3 = s3;
      for (let k = 0; k < missed; k += 2)
        out[misses[k]] = scale * this.zigguratSlow(misses[k + 1] >> 7, misses[k + 1] & 127);
    }
  }

  /** The ziggurat's rejection path (2.8% of draws): the base strip's tail (Marsaglia's method) or a layer's wedge. */
  private zigguratSlow(hz: number, layer: number): number {
    const { kn, wn, fn } = ZIGGURAT;
    for (;;) {
      const x = hz * wn[layer];
      if (layer === 0) {
        let tx: number;
        let ty: number;
        do {
          tx = -Math.log((this.nextU32() + 0.5) / 4294967296) / ZIGGURAT_R; // uniforms in (0, 1): finite logs
          ty = -Math.log((this.nextU32() + 0.5) / 4294967296);
        } while (ty + ty < tx * tx);
        return hz > 0 ? ZIGGURAT_R + tx : -ZIGGURAT_R - tx;
      }
      if (fn[layer] + ((this.nextU32() + 0.5) / 4294967296) * (fn[layer - 1] - fn[layer]) < Math.exp(-0.5 * x * x))
        return x;
      const r = this.nextU32() | 0;
      layer = r & 127;
      hz = r >> 7;
      if (Math.abs(hz) < kn[layer]) return hz * wn[layer];
    }
  }
}

const ZIGGURAT_BLOCK = 4096;
/** Per-thread scratch of fillNormal: the scaled layer widths and a block's misses (index, draw). */
const ZIGGURAT_SCRATCH = { scaled: new Float64Array(128), misses: new Int32Array(2 * ZIGGURAT_BLOCK) };

/** The ziggurat's right edge and layer area (Marsaglia & Tsang 2000, 128 layers). */
const ZIGGURAT_R = 3.442619855899;
const ZIGGURAT_V = 9.91256303526217e-3;

/** Layer tables for 25-bit signed positions (m = 2^24): kn thresholds, wn widths, fn densities. */
const ZIGGURAT = (() => {
  const m = 2 ** 24;
  const kn = new Int32Array(128);
  const wn = new Float64Array(128);
  const fn = new Float64Array(128);
  let dn = ZIGGURAT_R;
  let tn = dn;
  const q = ZIGGURAT_V / Math.exp(-0.5 * dn * dn);
  kn[0] = Math.floor((dn / q) * m);
  kn[1] = 0;
  wn[0] = q / m;
  wn[127] = dn / m;
  fn[0] = 1;
  fn[127] = Math.exp(-0.5 * dn * dn);
  for (let i = 126; i >= 1; i--) {
    dn = Math.sqrt(-2 * Math.log(ZIGGURAT_V / dn + Math.exp(-0.5 * dn * dn)));
    kn[i + 1] = Math.floor((dn / tn) * m);
    tn = dn;
    fn[i] = Math.exp(-0.5 * dn * dn);
    wn[i] = dn / m;
  }
  return { kn, wn, fn };
})();

/** murmur3's 32-bit finaliser: a bijection that mixes every input bit into every output bit. */
function fmix32(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}
