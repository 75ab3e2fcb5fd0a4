/**
 * Element types of stored tensors (the safetensors dtype names) and the float conversions that loading and
 * saving half-precision checkpoints need. Everything in memory is little-endian, like the file format; the
 * engine computes in F32, so F16/BF16 are widened on load and narrowed (round-to-nearest-even) on save.
 */
import { endianness } from 'node:os';
import { StarpoError } from '../../errors.ts';

export const DTYPES = ['F64', 'F32', 'F16', 'BF16', 'I64', 'I32', 'U8'] as const;
export type DType = (typeof DTYPES)[number];

export type TensorData = Float64Array | Float32Array | Uint16Array | BigInt64Array | Int32Array | Uint8Array;

/**
 * A dense tensor in row-major order. `data.length` equals the product of `shape` (1 for a scalar, shape []).
 * F16/BF16 tensors hold either Float32Array values (converted when written) or Uint16Array raw bits.
 */
export interface Tensor {
  readonly dtype: DType;
  readonly shape: readonly number[];
  readonly data: TensorData;
}

export const DTYPE_BYTES: Readonly<Record<DType, number>> = { F64: 8, F32: 4, F16: 2, BF16: 2, I64: 8, I32: 4, U8: 1 };

export function isDType(value: unknown): value is DType {
  return typeof value === 'string' && (DTYPES as readonly string[]).includes(value);
}

export function elementCount(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/** The typed array classes each dtype may be held in; the first is what a loaded tensor gets. */
const ARRAY_TYPES: Readonly<Record<DType, readonly (abstract new (...args: never[]) => unknown)[]>> = {
  F64: [Float64Array],
  F32: [Float32Array],
  F16: [Float32Array, Uint16Array],
  BF16: [Float32Array, Uint16Array],
  I64: [BigInt64Array],
  I32: [Int32Array],
  U8: [Uint8Array],
};

/** Throws unless `tensor.data` is an accepted array type for its dtype and matches its shape. */
export function checkTensor(name: string, tensor: Tensor): void {
  if (!isDType(tensor.dtype)) throw new StarpoError(`tensor ${name}: unknown dtype ${String(tensor.dtype)}`);
  for (const d of tensor.shape) {
    if (!Number.isSafeInteger(d) || d < 0) throw new StarpoError(`tensor ${name}: bad shape [${tensor.shape}]`);
  }
  if (!ARRAY_TYPES[tensor.dtype].some((t) => tensor.data instanceof t)) {
    throw new StarpoError(`tensor ${name}: ${tensor.dtype} data cannot be a ${tensor.data.constructor.name}`);
  }
  const n = elementCount(tensor.shape);
  if (tensor.data.length !== n) {
    throw new StarpoError(`tensor ${name}: shape [${tensor.shape}] has ${n} elements, data has ${tensor.data.length}`);
  }
}

/** The byte image of elements [start, end) of a tensor as stored on disk (a view when no conversion is needed). */
export function encodeElements(tensor: Tensor, start: number, end: number): Uint8Array {
  const { dtype, data } = tensor;
  if ((dtype === 'F16' || dtype === 'BF16') && data instanceof Float32Array) {
    const out = new Uint16Array(end - start);
    const bits = new Uint32Array(data.buffer, data.byteOffset + start * 4, end - start);
    const narrow = dtype === 'F16' ? f32BitsToF16 : f32BitsToBf16;
    for (let i = 0; i < out.length; i++) out[i] = narrow(bits[i]);
    return new Uint8Array(out.buffer);
  }
  const size = data.BYTES_PER_ELEMENT;
  return new Uint8Array(data.buffer, data.byteOffset + start * size, (end - start) * size);
}

/**
 * Decodes a tensor's stored bytes into an aligned array; F16 and BF16 become F32. `bytes` must hold exactly
 * the tensor (element count × dtype size, checked by the caller). A buffer owned whole by `bytes` is adopted
 * without a copy, which is what the file reader hands over.
 */
export function decodeTensor(dtype: DType, shape: readonly number[], bytes: Uint8Array): Tensor {
  const owned = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
  // new Uint8Array(view) copies; Buffer#slice would not (it returns a view into Node's shared pool).
  const buf = (owned ? bytes.buffer : new Uint8Array(bytes).buffer) as ArrayBuffer;
  switch (dtype) {
    case 'F64':
      return { dtype, shape, data: new Float64Array(buf) };
    case 'F32':
      return { dtype, shape, data: new Float32Array(buf) };
    case 'I64':
      return { dtype, shape, data: new BigInt64Array(buf) };
    case 'I32':
      return { dtype, shape, data: new Int32Array(buf) };
    case 'U8':
      return { dtype, shape, data: new Uint8Array(buf) };
    case 'F16':
      return { dtype: 'F32', shape, data: f16ToF32(new Uint16Array(buf)) };
    case 'BF16':
      return { dtype: 'F32', shape, data: bf16ToF32(new Uint16Array(buf)) };
  }
}

/** BF16 is the top half of an F32, so widening is a shift. */
export function bf16ToF32(bits: Uint16Array): Float32Array {
  const out = new Uint32Array(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = bits[i] << 16;
  return new Float32Array(out.buffer);
}

let f16Table: Float32Array | undefined;

/** Widens IEEE half floats through a 65,536-entry table (256 KiB, built once): loading is a lookup per element. */
export function f16ToF32(bits: Uint16Array): Float32Array {
  f16Table ??= buildF16Table();
  const table = f16Table;
  const out = new Float32Array(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = table[bits[i]];
  return out;
}

function buildF16Table(): Float32Array {
  const table = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const sign = h & 0x8000 ? -1 : 1;
    const exp = (h >> 10) & 0x1f;
    const mant = h & 0x3ff;
    if (exp === 0) table[h] = sign * mant * 2 ** -24;
    else if (exp === 0x1f) table[h] = mant ? NaN : sign * Infinity;
    else table[h] = sign * (1 + mant / 1024) * 2 ** (exp - 15);
  }
  return table;
}

/** F32 bit pattern → F16 bits, rounding to nearest even; overflow gives ±Inf, NaN stays NaN. */
export function f32BitsToF16(bits: number): number {
  const sign = (bits >>> 16) & 0x8000;
  const exp = (bits >>> 23) & 0xff;
  let mant = bits & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 | (mant >>> 13) : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    // Subnormal half: shift the full significand (implicit 1 included) right by 14 - e.
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let half = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const halfway = 1 << (shift - 1);
    if (rem > halfway || (rem === halfway && half & 1)) half++;
    return sign | half;
  }
  let half = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  // A carry out of the mantissa correctly bumps the exponent (and rounds 65520+ up to Inf).
  if (rem > 0x1000 || (rem === 0x1000 && half & 1)) half++;
  return sign | half;
}

/** F32 bit pattern → BF16 bits, rounding to nearest even; NaN stays a quiet NaN. */
export function f32BitsToBf16(bits: number): number {
  if ((bits & 0x7f800000) === 0x7f800000 && bits & 0x7fffff) return ((bits >>> 16) & 0x8000) | 0x7fc0;
  return ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16) & 0xffff;
}

/** safetensors is little-endian and typed arrays use the host order; refuse to silently byte-swap. */
export function assertLittleEndian(): void {
  if (endianness() !== 'LE') throw new StarpoError('safetensors I/O needs a little-endian host');
}
