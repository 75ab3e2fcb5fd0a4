/**
 * The tensor encodings starpo writes into GGUF files, bit-exact with the `gguf` Python package's `quantize`
 * (what llama.cpp's convert_hf_to_gguf.py calls), so an exported file is byte for byte the converter's:
 * F32 as is, F16 rounded to nearest even (numpy's astype), Q8_0 as ggml-quants.c's reference quantiser —
 * every operation rounded to float32 where numpy's float32 arithmetic rounds (checked against fixtures from
 * scripts/gguf_quantize_reference.py).
 */
import { f32BitsToF16 } from '../../policy/io/dtype.ts';
import { GGML_TYPES } from './types.ts';

export const EXPORT_TYPES = ['F32', 'F16', 'Q8_0'] as const;
export type ExportType = (typeof EXPORT_TYPES)[number];

const f = Math.fround;

/** Whether rows of `rowLength` weights can be stored as `type` (block types need whole blocks per row). */
export function canStore(type: ExportType, rowLength: number): boolean {
  return rowLength % GGML_TYPES[type].blockSize === 0;
}

/** The stored bytes of `data` (row-major, rows of a whole number of blocks) as `type`. */
export function quantize(type: ExportType, data: Float32Array): Uint8Array {
  switch (type) {
    case 'F32':
      return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    case 'F16':
      return quantizeF16(data);
    case 'Q8_0':
      return quantizeQ8_0(data);
  }
}

export function quantizeF16(data: Float32Array): Uint8Array {
  const bits = new Uint32Array(data.buffer, data.byteOffset, data.length);
  const out = new Uint16Array(data.length);
  for (let i = 0; i < out.length; i++) out[i] = f32BitsToF16(bits[i]);
  return new Uint8Array(out.buffer);
}

/**
 * Blocks of 32 weights: an fp16 scale d = max|x| / 127 (computed in float32, then narrowed), and the 32
 * int8 values round(x · (1/d)), rounding halves away from zero (numpy's np_roundf, as C's roundf).
 */
export function quantizeQ8_0(data: Float32Array): Uint8Array {
  if (data.length % 32 !== 0) throw new RangeError(`Q8_0 needs whole blocks of 32, got ${data.length} weights`);
  const out = new Uint8Array((data.length / 32) * 34);
  const view = new DataView(out.buffer);
  const scratch = new Float32Array(1);
  const scratchBits = new Uint32Array(scratch.buffer);
  for (let b = 0, o = 0; b < data.length; b += 32, o += 34) {
    let amax = 0;
    for (let j = 0; j < 32; j++) amax = Math.max(amax, Math.abs(data[b + j]));
    // Float32 operands, so double arithmetic then one rounding to float32 is float32 arithmetic.
    const d = f(amax / 127);
    const id = d === 0 ? 0 : f(1 / d);
    scratch[0] = d;
    view.setUint16(o, f32BitsToF16(scratchBits[0]), true);
    for (let j = 0; j < 32; j++) view.setInt8(o + 2 + j, roundHalfAway(f(data[b + j] * id)));
  }
  return out;
}

/** np_roundf: floor(|x|) + floor(2·frac(|x|)), with x's sign; exact for float32 inputs. */
function roundHalfAway(x: number): number {
  const a = Math.abs(x);
  const floored = Math.floor(a);
  return Math.sign(x) * (floored + Math.floor(2 * (a - floored)));
}
