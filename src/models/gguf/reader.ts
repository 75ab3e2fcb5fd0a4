/**
 * Reading GGUF files (llama.cpp's model format: a header of typed key/value metadata and tensor infos, then
 * aligned tensor data). A small reader of our own rather than @huggingface/gguf: that package parses over
 * fetch and stops at the metadata, while an import needs every tensor's bytes read at its offset, and a
 * damaged file must fail in one line naming the file and what is wrong before anything is written.
 * Only the header is held in memory; tensors are read one at a time.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { CorruptDataError } from '../../errors.ts';
import { readFully } from '../../storage/atomic-file.ts';
import { GGML_TYPES, type GgmlTypeName, ggmlTypeOf, tensorBytes } from './types.ts';

const MAGIC = 0x46554747; // "GGUF" read little-endian
const DEFAULT_ALIGNMENT = 32;

/** A metadata value: scalars as JS values (64-bit integers as bigint only beyond 2^53), arrays as arrays. */
export type GgufValue = number | bigint | boolean | string | GgufValue[];

export interface GgufTensorInfo {
  readonly name: string;
  /** ggml order: dims[0] is the fastest-varying (a row's length); the row-major shape is the reverse. */
  readonly dims: readonly number[];
  readonly type: GgmlTypeName;
  /** Absolute byte offset in the file. */
  readonly offset: number;
  readonly bytes: number;
}

export interface GgufHeader {
  readonly version: number;
  readonly metadata: ReadonlyMap<string, GgufValue>;
  readonly tensors: readonly GgufTensorInfo[];
}

/** Parses `bytes` as far as the header goes; throws NeedMore when the buffer ends inside it. */
class Cursor {
  private readonly view: DataView;
  private static readonly utf8 = new TextDecoder('utf-8', { fatal: true });
  pos = 0;
  constructor(
    private readonly bytes: Uint8Array,
    private readonly eof: boolean,
    private readonly source: string,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  private need(n: number): number {
    if (this.pos + n > this.bytes.length) {
      if (this.eof) throw new CorruptDataError(`${this.source}: truncated GGUF header (ends at byte ${this.pos})`);
      throw NEED_MORE;
    }
    const at = this.pos;
    this.pos += n;
    return at;
  }
  u8 = (): number => this.view.getUint8(this.need(1));
  i8 = (): number => this.view.getInt8(this.need(1));
  u16 = (): number => this.view.getUint16(this.need(2), true);
  i16 = (): number => this.view.getInt16(this.need(2), true);
  u32 = (): number => this.view.getUint32(this.need(4), true);
  i32 = (): number => this.view.getInt32(this.need(4), true);
  f32 = (): number => this.view.getFloat32(this.need(4), true);
  f64 = (): number => this.view.getFloat64(this.need(8), true);
  u64 = (): number | bigint => small(this.view.getBigUint64(this.need(8), true));
  i64 = (): number | bigint => small(this.view.getBigInt64(this.need(8), true));
  /** A u64 that must be a count or offset within reach. */
  size(what: string, max = Number.MAX_SAFE_INTEGER): number {
    const v = this.u64();
    if (typeof v === 'bigint' || v > max) throw new CorruptDataError(`${this.source}: ${what} ${v} is impossible`);
    return v;
  }
  string(): string {
    const n = this.size('string length', this.eof ? this.bytes.length : Number.MAX_SAFE_INTEGER);
    const at = this.need(n);
    try {
      return Cursor.utf8.decode(this.bytes.subarray(at, at + n));
    } catch {
      throw new CorruptDataError(`${this.source}: a metadata string at byte ${at} is not UTF-8`);
    }
  }
}

const NEED_MORE = Symbol('need more header bytes');

function small(v: bigint): number | bigint {
  return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(v) : v;
}

/** GGUF value types (gguf.h's enum gguf_type), as readers. */
const VALUE_READERS: ReadonlyArray<((c: Cursor) => GgufValue) | null> = [
  (c) => c.u8(),
  (c) => c.i8(),
  (c) => c.u16(),
  (c) => c.i16(),
  (c) => c.u32(),
  (c) => c.i32(),
  (c) => c.f32(),
  (c) => c.u8() !== 0,
  (c) => c.string(),
  null, // 9: array, handled by readValue
  (c) => c.u64(),
  (c) => c.i64(),
  (c) => c.f64(),
];

function readValue(c: Cursor, type: number, key: string, source: string, depth = 0): GgufValue {
  if (type === 9) {
    const itemType = c.u32();
    const n = c.size(`array length of ${key}`);
    if (depth > 2) throw new CorruptDataError(`${source}: metadata ${key} nests arrays too deeply`);
    const items: GgufValue[] = new Array<GgufValue>(n);
    for (let i = 0; i < n; i++) items[i] = readValue(c, itemType, key, source, depth + 1);
    return items;
  }
  const reader = VALUE_READERS[type];
  if (!reader) throw new CorruptDataError(`${source}: metadata ${key} has unknown value type ${type}`);
  return reader(c);
}

function parseHeader(bytes: Uint8Array, fileSize: number, eof: boolean, source: string): GgufHeader {
  const c = new Cursor(bytes, eof, source);
  if (c.u32() !== MAGIC) throw new CorruptDataError(`${source}: not a GGUF file (no GGUF magic)`);
  const version = c.u32();
  if (version !== 2 && version !== 3)
    throw new CorruptDataError(`${source}: GGUF version ${version} is not supported (2 and 3 are)`);
  const tensorCount = c.size('tensor count', 1 << 24);
  const kvCount = c.size('metadata count', 1 << 24);
  const metadata = new Map<string, GgufValue>();
  for (let i = 0; i < kvCount; i++) {
    const key = c.string();
    metadata.set(key, readValue(c, c.u32(), key, source));
  }
  const infos: { name: string; dims: number[]; typeId: number; rel: number }[] = [];
  for (let i = 0; i < tensorCount; i++) {
    const name = c.string();
    const nDims = c.u32();
    if (nDims > 4) throw new CorruptDataError(`${source}: tensor ${name} has ${nDims} dimensions (at most 4)`);
    const dims = Array.from({ length: nDims }, () => c.size(`dimension of ${name}`, 2 ** 40));
    infos.push({ name, dims, typeId: c.u32(), rel: c.size(`offset of ${name}`) });
  }
  const alignment = alignmentOf(metadata, source);
  const dataStart = Math.ceil(c.pos / alignment) * alignment;
  const tensors = infos.map((t): GgufTensorInfo => {
    const type = ggmlTypeOf(t.typeId, t.name, source);
    const bytes = tensorBytes(type, t.dims, t.name, source);
    const offset = dataStart + t.rel;
    if (t.rel % alignment !== 0)
      throw new CorruptDataError(`${source}: tensor ${t.name} data offset ${t.rel} is not ${alignment}-aligned`);
    if (offset + bytes > fileSize)
      throw new CorruptDataError(
        `${source}: tensor ${t.name} ends at byte ${offset + bytes}, past the end of the file (${fileSize} bytes): ` +
          'truncated?',
      );
    return { name: t.name, dims: t.dims, type, offset, bytes };
  });
  const names = new Set<string>();
  for (const t of tensors) {
    if (names.has(t.name)) throw new CorruptDataError(`${source}: tensor ${t.name} appears twice`);
    names.add(t.name);
  }
  return { version, metadata, tensors };
}

function alignmentOf(metadata: ReadonlyMap<string, GgufValue>, source: string): number {
  const a = metadata.get('general.alignment') ?? DEFAULT_ALIGNMENT;
  if (typeof a !== 'number' || a <= 0 || (a & (a - 1)) !== 0)
    throw new CorruptDataError(`${source}: general.alignment ${String(a)} is not a power of two`);
  return a;
}

/** An open GGUF file whose header has been read and checked; tensors are read on demand. */
export class GgufFile {
  private constructor(
    private readonly fh: FileHandle,
    readonly path: string,
    readonly header: GgufHeader,
  ) {}

  /** Opens and checks `path`: every tensor's type known and its bytes inside the file. */
  static async open(path: string): Promise<GgufFile> {
    const fh = await open(path, 'r').catch((err: NodeJS.ErrnoException) => {
      throw new CorruptDataError(`${path}: ${err.code === 'ENOENT' ? 'no such file' : err.message}`);
    });
    try {
      const { size } = await fh.stat();
      // Headers are a few MB (a 150k-token vocabulary); read more only when one is larger.
      for (let chunk = 8 << 20; ; chunk *= 4) {
        const length = Math.min(size, chunk);
        const bytes = await readFully(fh, 0, length);
        try {
          return new GgufFile(fh, path, parseHeader(bytes, size, length === size, path));
        } catch (err) {
          if (err !== NEED_MORE) throw err;
        }
      }
    } catch (err) {
      await fh.close();
      throw err;
    }
  }

  get metadata(): ReadonlyMap<string, GgufValue> {
    return this.header.metadata;
  }

  tensor(name: string): GgufTensorInfo | undefined {
    return this.header.tensors.find((t) => t.name === name);
  }

  /** The stored bytes of one tensor. */
  async raw(t: GgufTensorInfo): Promise<Uint8Array> {
    return readFully(this.fh, t.offset, t.bytes);
  }

  async close(): Promise<void> {
    await this.fh.close();
  }
}

export { GGML_TYPES };
