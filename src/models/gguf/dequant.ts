/**
 * Dequantisation of ggml's block formats to float32, bit-exact with the `gguf` Python package's
 * `dequantize` (llama.cpp's reference): every product and sum is rounded to float32 where numpy's float32
 * arithmetic rounds (Math.fround), in the same order, so an imported model's weights are the weights every
 * other GGUF loader computes (checked against fixtures from scripts/gguf_reference.py). Block layouts are
 * ggml-common.h's; each function reads `n` weights starting at block 0 of `raw`.
 */
import { bf16ToF32, f16ToF32 } from '../../policy/io/dtype.ts';
import { GGML_TYPES, type GgmlTypeName } from './types.ts';

const f = Math.fround;
const QK_K = 256;

type Dequantiser = (raw: Uint8Array, view: DataView, out: Float32Array) => void;

/** fp16 at byte `at`, widened to float32 (exact). */
function half(view: DataView, at: number): number {
  return HALF_TO_F32[view.getUint16(at, true)]!;
}
const HALF_TO_F32 = f16ToF32(Uint16Array.from({ length: 65536 }, (_, i) => i));

function q8_0(raw: Uint8Array, view: DataView, out: Float32Array): void {
  for (let b = 0, o = 0; o < out.length; b += 34) {
    const d = half(view, b);
    for (let j = 0; j < 32; j++) out[o++] = f(view.getInt8(b + 2 + j) * d);
  }
}

/** Q4_0 and Q4_1: weight j < 16 is the low nibble of byte j, weight j + 16 its high nibble. */
function q4(withMin: boolean): Dequantiser {
  const bytes = withMin ? 20 : 18;
  const qsAt = withMin ? 4 : 2;
  return (raw, view, out) => {
    for (let b = 0, o = 0; o < out.length; b += bytes, o += 32) {
      const d = half(view, b);
      const m = withMin ? half(view, b + 2) : 0;
      for (let j = 0; j < 16; j++) {
        const byte = raw[b + qsAt + j]!;
        if (withMin) {
          out[o + j] = f(f(d * (byte & 15)) + m);
          out[o + j + 16] = f(f(d * (byte >> 4)) + m);
        } else {
          out[o + j] = f(d * ((byte & 15) - 8));
          out[o + j + 16] = f(d * ((byte >> 4) - 8));
        }
      }
    }
  };
}

/** Q5_0 and Q5_1: Q4's nibbles plus a fifth bit per weight from a little-endian u32. */
function q5(withMin: boolean): Dequantiser {
  const bytes = withMin ? 24 : 22;
  const qhAt = withMin ? 4 : 2;
  return (raw, view, out) => {
    for (let b = 0, o = 0; o < out.length; b += bytes, o += 32) {
      const d = half(view, b);
      const m = withMin ? half(view, b + 2) : 0;
      const qh = view.getUint32(b + qhAt, true);
      for (let j = 0; j < 32; j++) {
        const byte = raw[b + qhAt + 4 + (j & 15)]!;
        const q = (j < 16 ? byte & 15 : byte >> 4) | (((qh >>> j) & 1) << 4);
        out[o + j] = withMin ? f(f(d * q) + m) : f(d * (q - 16));
      }
    }
  };
}

function q2_K(raw: Uint8Array, view: DataView, out: Float32Array): void {
  for (let b = 0, o = 0; o < out.length; b += 84, o += QK_K) {
    const d = half(view, b + 80);
    const dmin = half(view, b + 82);
    for (let p = 0; p < QK_K; p++) {
      const sc = raw[b + (p >> 4)]!;
      const q = (raw[b + 16 + (p >> 7) * 32 + (p & 31)]! >> (((p >> 5) & 3) * 2)) & 3;
      out[o + p] = f(f(f(d * (sc & 15)) * q) - f(dmin * (sc >> 4)));
    }
  }
}

/** Q3_K's 16 six-bit scales: low nibbles in bytes 0–7, the top two bits in bytes 8–11. */
function q3Scale(raw: Uint8Array, at: number, i: number): number {
  const low = (raw[at + (i & 7)]! >> (i < 8 ? 0 : 4)) & 15;
  const high = (raw[at + 8 + (i & 3)]! >> ((i >> 2) * 2)) & 3;
  return (low | (high << 4)) - 32;
}

function q3_K(raw: Uint8Array, view: DataView, out: Float32Array): void {
  for (let b = 0, o = 0; o < out.length; b += 110, o += QK_K) {
    const d = half(view, b + 108);
    for (let p = 0; p < QK_K; p++) {
      const dl = f(d * q3Scale(raw, b + 96, p >> 4));
      const low = (raw[b + 32 + (p >> 7) * 32 + (p & 31)]! >> (((p >> 5) & 3) * 2)) & 3;
      // The high bit subtracts 4 when it is clear, not when it is set (ggml's convention).
      const high = ((raw[b + (p & 31)]! >> (p >> 5)) & 1) ^ 1;
      out[o + p] = f(dl * (low - (high << 2)));
    }
  }
}

/** Q4_K/Q5_K's eight 6-bit scale and min pairs, packed into 12 bytes at `at`. */
function kScaleMin(raw: Uint8Array, at: number, j: number): [number, number] {
  if (j < 4) return [raw[at + j]! & 63, raw[at + 4 + j]! & 63];
  const md = raw[at + 8 + j - 4]!;
  return [(md & 15) | ((raw[at + j - 4]! >> 2) & 48), (md >> 4) | ((raw[at + j]! >> 2) & 48)];
}

function q45_K(five: boolean): Dequantiser {
  const bytes = five ? 176 : 144;
  const qsAt = five ? 48 : 16;
  return (raw, view, out) => {
    for (let b = 0, o = 0; o < out.length; b += bytes, o += QK_K) {
      const d = half(view, b);
      const dmin = half(view, b + 2);
      for (let j = 0; j < 8; j++) {
        const [sc, mn] = kScaleMin(raw, b + 4, j);
        const dj = f(d * sc);
        const mj = f(dmin * mn);
        for (let l = 0; l < 32; l++) {
          const byte = raw[b + qsAt + (j >> 1) * 32 + l]!;
          let q = j & 1 ? byte >> 4 : byte & 15;
          if (five) q |= ((raw[b + 16 + l]! >> j) & 1) << 4;
          out[o + j * 32 + l] = f(f(dj * q) - mj);
        }
      }
    }
  };
}

function q6_K(raw: Uint8Array, view: DataView, out: Float32Array): void {
  for (let b = 0, o = 0; o < out.length; b += 210, o += QK_K) {
    const d = half(view, b + 208);
    for (let p = 0; p < QK_K; p++) {
      const h = p >> 7;
      const low = (raw[b + h * 64 + (p & 63)]! >> (((p >> 6) & 1) * 4)) & 15;
      const high = (raw[b + 128 + h * 32 + (p & 31)]! >> (((p >> 5) & 3) * 2)) & 3;
      out[o + p] = f(f(d * view.getInt8(b + 192 + (p >> 4))) * ((low | (high << 4)) - 32));
    }
  }
}

const DEQUANTISERS: Readonly<Record<GgmlTypeName, Dequantiser>> = {
  F32: (raw, _view, out) =>
    out.set(new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + out.length * 4))),
  F16: (raw, _view, out) => out.set(f16ToF32(halfWords(raw, out.length))),
  BF16: (raw, _view, out) => out.set(bf16ToF32(halfWords(raw, out.length))),
  Q8_0: q8_0,
  Q4_0: q4(false),
  Q4_1: q4(true),
  Q5_0: q5(false),
  Q5_1: q5(true),
  Q2_K: q2_K,
  Q3_K: q3_K,
  Q4_K: q45_K(false),
  Q5_K: q45_K(true),
  Q6_K: q6_K,
};

function halfWords(raw: Uint8Array, n: number): Uint16Array {
  return new Uint16Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + n * 2));
}

/** `count` weights of `type` from their stored bytes, as float32 (in storage order). */
export function dequantize(type: GgmlTypeName, raw: Uint8Array, count: number): Float32Array {
  const { blockSize, blockBytes } = GGML_TYPES[type];
  if (count % blockSize !== 0 || raw.length < (count / blockSize) * blockBytes)
    throw new RangeError(`dequantize ${type}: ${raw.length} bytes do not hold ${count} weights`);
  const out = new Float32Array(count);
  DEQUANTISERS[type](raw, new DataView(raw.buffer, raw.byteOffset, raw.byteLength), out);
  return out;
}
