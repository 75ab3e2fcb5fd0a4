/**
 * Writing GGUF v3 files (the layout reader.ts reads): magic, version, tensor and key/value counts, typed
 * metadata, tensor infos (dims in ggml order, offsets relative to the aligned data section), then each
 * tensor's bytes at its aligned offset. Only the header is built in memory; tensors are produced and written
 * one at a time, so a multi-gigabyte model never has to be held twice. The file is written under a temporary
 * name and renamed into place when complete: an interrupted export leaves no file that looks whole.
 */
import type { FileHandle } from 'node:fs/promises';
import { StarpoError } from '../../errors.ts';
import { writeFileAtomic, writeFully } from '../../storage/atomic-file.ts';
import { type GgmlTypeName, GGML_TYPES, tensorBytes } from './types.ts';

export const GGUF_ALIGNMENT = 32;

/** gguf.h's value types, for the ones starpo writes. */
const TYPE_IDS = { uint8: 0, uint32: 4, int32: 5, float32: 6, bool: 7, string: 8, array: 9, uint64: 10 } as const;
type ScalarType = Exclude<keyof typeof TYPE_IDS, 'array'>;

/** A metadata value with the GGUF type it is stored as (the type is part of the format: u32 ≠ i32). */
export type GgufEntry =
  | { readonly type: 'uint8' | 'int32' | 'uint32' | 'float32' | 'uint64'; readonly value: number }
  | { readonly type: 'bool'; readonly value: boolean }
  | { readonly type: 'string'; readonly value: string }
  | { readonly type: 'array'; readonly itemType: ScalarType; readonly value: readonly (number | string | boolean)[] };

export const gguf = {
  u32: (value: number): GgufEntry => ({ type: 'uint32', value }),
  f32: (value: number): GgufEntry => ({ type: 'float32', value }),
  bool: (value: boolean): GgufEntry => ({ type: 'bool', value }),
  str: (value: string): GgufEntry => ({ type: 'string', value }),
  strings: (value: readonly string[]): GgufEntry => ({ type: 'array', itemType: 'string', value }),
  i32s: (value: readonly number[]): GgufEntry => ({ type: 'array', itemType: 'int32', value }),
};

export interface GgufTensorSource {
  readonly name: string;
  /** Row-major shape; stored reversed (ggml's order, a row's length first). */
  readonly shape: readonly number[];
  readonly type: GgmlTypeName;
  /** The stored bytes, asked for when the writer reaches this tensor. */
  readonly bytes: () => Promise<Uint8Array> | Uint8Array;
}

/** A growable little-endian byte buffer for the header. */
class HeaderBytes {
  private buf = new Uint8Array(1 << 16);
  private view = new DataView(this.buf.buffer);
  length = 0;
  private static readonly utf8 = new TextEncoder();
  private room(n: number): number {
    if (this.length + n > this.buf.length) {
      const next = new Uint8Array(Math.max(this.buf.length * 2, this.length + n));
      next.set(this.buf.subarray(0, this.length));
      this.buf = next;
      this.view = new DataView(next.buffer);
    }
    const at = this.length;
    this.length += n;
    return at;
  }
  // Every writer takes its offset before touching this.buf or this.view: room() may replace both.
  private at(n: number): DataView {
    this.room(n);
    return this.view;
  }
  u8 = (v: number) => this.at(1).setUint8(this.length - 1, v);
  u32 = (v: number) => this.at(4).setUint32(this.length - 4, v, true);
  i32 = (v: number) => this.at(4).setInt32(this.length - 4, v, true);
  f32 = (v: number) => this.at(4).setFloat32(this.length - 4, v, true);
  u64 = (v: number) => this.at(8).setBigUint64(this.length - 8, BigInt(v), true);
  string(s: string): void {
    const bytes = HeaderBytes.utf8.encode(s);
    this.u64(bytes.length);
    const at = this.room(bytes.length);
    this.buf.set(bytes, at);
  }
  padTo(alignment: number): void {
    this.room((alignment - (this.length % alignment)) % alignment);
  }
  bytes(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }
}

function writeScalar(h: HeaderBytes, type: ScalarType, v: number | string | boolean, key: string): void {
  const want = type === 'string' ? 'string' : type === 'bool' ? 'boolean' : 'number';
  if (typeof v !== want) throw new StarpoError(`gguf metadata ${key}: ${JSON.stringify(v)} is not a ${type}`);
  if (type === 'string') h.string(v as string);
  else if (type === 'bool') h.u8(v ? 1 : 0);
  else if (type === 'float32') h.f32(v as number);
  else {
    const n = v as number;
    const [lo, hi] = type === 'int32' ? [-(2 ** 31), 2 ** 31 - 1] : [0, type === 'uint8' ? 255 : 2 ** 32 - 1];
    if (!Number.isInteger(n) || n < lo || (type !== 'uint64' && n > hi) || !Number.isSafeInteger(n))
      throw new StarpoError(`gguf metadata ${key}: ${n} does not fit a ${type}`);
    if (type === 'uint8') h.u8(n);
    else if (type === 'int32') h.i32(n);
    else if (type === 'uint32') h.u32(n);
    else h.u64(n);
  }
}

/** The header bytes (padded to the alignment) and each tensor's byte count. */
export function encodeHeader(
  metadata: ReadonlyMap<string, GgufEntry>,
  tensors: readonly Omit<GgufTensorSource, 'bytes'>[],
  alignment = GGUF_ALIGNMENT,
): { header: Uint8Array; sizes: number[] } {
  const h = new HeaderBytes();
  h.u32(0x46554747); // "GGUF"
  h.u32(3);
  h.u64(tensors.length);
  h.u64(metadata.size);
  for (const [key, e] of metadata) {
    h.string(key);
    h.u32(TYPE_IDS[e.type]);
    if (e.type === 'array') {
      h.u32(TYPE_IDS[e.itemType]);
      h.u64(e.value.length);
      for (const v of e.value) writeScalar(h, e.itemType, v, key);
    } else writeScalar(h, e.type, e.value, key);
  }
  const sizes: number[] = [];
  let offset = 0;
  for (const t of tensors) {
    const dims = [...t.shape].reverse();
    const bytes = tensorBytes(t.type, dims, t.name, 'gguf export');
    h.string(t.name);
    h.u32(dims.length);
    for (const d of dims) h.u64(d);
    h.u32(GGML_TYPES[t.type].id);
    h.u64(offset);
    sizes.push(bytes);
    offset += Math.ceil(bytes / alignment) * alignment;
  }
  h.padTo(alignment);
  return { header: h.bytes(), sizes };
}

/**
 * Writes a GGUF file at `path` (replacing it only when complete). Tensors are written in the order given;
 * `general.alignment` in `metadata`, if present, must equal `alignment`.
 */
export async function writeGguf(
  path: string,
  metadata: ReadonlyMap<string, GgufEntry>,
  tensors: readonly GgufTensorSource[],
  o: { readonly alignment?: number; readonly onTensor?: (done: number, total: number) => void } = {},
): Promise<void> {
  const alignment = o.alignment ?? GGUF_ALIGNMENT;
  const stated = metadata.get('general.alignment');
  if (stated && stated.value !== alignment)
    throw new StarpoError(`gguf metadata general.alignment ${String(stated.value)} but writing at ${alignment}`);
  const { header, sizes } = encodeHeader(metadata, tensors, alignment);
  const zeros = new Uint8Array(alignment);
  await writeFileAtomic(path, async (fh: FileHandle) => {
    await writeFully(fh, header);
    for (const [i, t] of tensors.entries()) {
      const bytes = await t.bytes();
      if (bytes.length !== sizes[i])
        throw new StarpoError(`gguf tensor ${t.name}: ${bytes.length} bytes given, ${sizes[i]} expected`);
      await writeFully(fh, bytes);
      await writeFully(fh, zeros.subarray(0, (alignment - (bytes.length % alignment)) % alignment));
      o.onTensor?.(i + 1, tensors.length);
    }
  });
}
