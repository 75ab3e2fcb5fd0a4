/**
 * Reading and writing safetensors files (the Hugging Face weights format; layout in safetensors-header.ts).
 * Reading parses and validates the header once, then reads tensors one at a time, so loading a checkpoint
 * never needs the whole file in memory twice. Writing streams tensor by tensor into a temporary file that is
 * renamed into place only when complete (see atomic.ts).
 */
import { open, stat, type FileHandle } from 'node:fs/promises';
import { CorruptDataError, StarpoError } from '../../errors.ts';
import { readFully, writeFileAtomic, writeFully } from '../../storage/atomic-file.ts';
import { type ContentDigest, DigestCounter } from '../../storage/hash.ts';
import { assertLittleEndian, decodeTensor, elementCount, encodeElements, type Tensor } from './dtype.ts';
import {
  parseHeaderJson,
  parseHeaderLength,
  planSafetensors,
  type SafetensorsHeader,
  type TensorInfo,
} from './safetensors-header.ts';

export type { SafetensorsHeader, TensorInfo } from './safetensors-header.ts';

/** Tensors by name plus the file's `__metadata__` strings. */
export interface SafetensorsContents {
  readonly tensors: Map<string, Tensor>;
  readonly metadata: Readonly<Record<string, string>>;
}

/** Anything that yields [name, tensor] pairs: a Map, Object.entries(record), an array. */
export type NamedTensors = Iterable<readonly [string, Tensor]>;

/** An open safetensors file whose header has been validated; tensors are read on demand. */
export class SafetensorsReader {
  private readonly byName: Map<string, TensorInfo>;

  private constructor(
    private readonly fh: FileHandle,
    readonly path: string,
    readonly header: SafetensorsHeader,
  ) {
    this.byName = new Map(header.tensors.map((t) => [t.name, t]));
  }

  /** Opens and validates `path`; throws CorruptDataError if the header is damaged or inconsistent. */
  static async open(path: string): Promise<SafetensorsReader> {
    assertLittleEndian();
    const fh = await open(path, 'r');
    try {
      const { size } = await fh.stat();
      const headerLength = parseHeaderLength(await readFully(fh, 0, 8), size, path);
      const json = await readFully(fh, 8, headerLength);
      const header = parseHeaderJson(json, size - 8 - headerLength, path);
      return new SafetensorsReader(fh, path, header);
    } catch (err) {
      await fh.close();
      throw err;
    }
  }

  get metadata(): Readonly<Record<string, string>> {
    return this.header.metadata;
  }

  /** Tensor names in data order. */
  names(): string[] {
    return this.header.tensors.map((t) => t.name);
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  info(name: string): TensorInfo {
    const info = this.byName.get(name);
    if (!info) throw new StarpoError(`${this.path}: no tensor named ${name}`);
    return info;
  }

  /** Reads one tensor; F16 and BF16 come back as F32. */
  async read(name: string): Promise<Tensor> {
    const info = this.info(name);
    const bytes = await readFully(this.fh, this.header.dataStart + info.begin, info.end - info.begin);
    if (bytes.length !== info.end - info.begin)
      throw new CorruptDataError(`${this.path}: truncated while reading ${name}`);
    return decodeTensor(info.dtype, info.shape, bytes);
  }

  async readAll(): Promise<Map<string, Tensor>> {
    const out = new Map<string, Tensor>();
    for (const { name } of this.header.tensors) out.set(name, await this.read(name));
    return out;
  }

  async close(): Promise<void> {
    await this.fh.close();
  }
}

/** Reads a whole safetensors file. */
export async function readSafetensors(path: string): Promise<SafetensorsContents> {
  const reader = await SafetensorsReader.open(path);
  try {
    return { tensors: await reader.readAll(), metadata: reader.metadata };
  } finally {
    await reader.close();
  }
}

/** Parses a safetensors image already in memory (e.g. fetched from object storage). */
export function parseSafetensors(bytes: Uint8Array, source = '<buffer>'): SafetensorsContents {
  assertLittleEndian();
  const headerLength = parseHeaderLength(bytes, bytes.length, source);
  const header = parseHeaderJson(bytes.subarray(8, 8 + headerLength), bytes.length - 8 - headerLength, source);
  const tensors = new Map<string, Tensor>();
  for (const t of header.tensors) {
    const slice = bytes.subarray(header.dataStart + t.begin, header.dataStart + t.end);
    tensors.set(t.name, decodeTensor(t.dtype, t.shape, slice));
  }
  return { tensors, metadata: header.metadata };
}

/** Serialises tensors into one in-memory safetensors image (for small files; use writeSafetensors for weights). */
export function serializeSafetensors(
  tensors: NamedTensors,
  metadata: Readonly<Record<string, string>> = {},
): Uint8Array {
  assertLittleEndian();
  const plan = planSafetensors(tensors, metadata);
  const out = new Uint8Array(plan.fileSize);
  out.set(plan.headerBytes, 0);
  for (const t of plan.tensors) {
    out.set(encodeElements(t.tensor, 0, elementCount(t.shape)), plan.headerBytes.length + t.begin);
  }
  return out;
}

/** Elements converted per chunk when narrowing F32 to F16/BF16, bounding the extra memory a write needs. */
const CHUNK_ELEMENTS = 1 << 20;

/**
 * Writes tensors to `path` atomically: streamed into a temporary file, fsynced, renamed. Returns the file's size and
 * SHA-256, hashed from the bytes as they are written (each chunk while its write runs), so a caller that needs the
 * digest (a checkpoint's manifest) does not read a gigabyte back.
 * Tensors are laid out by element size then name; F16/BF16 tensors given as Float32Array are rounded to
 * nearest even.
 */
export async function writeSafetensors(
  path: string,
  tensors: NamedTensors,
  metadata: Readonly<Record<string, string>> = {},
): Promise<ContentDigest> {
  assertLittleEndian();
  const plan = planSafetensors(tensors, metadata);
  const counter = new DigestCounter();
  const put = async (fh: FileHandle, bytes: Uint8Array) => {
    const written = writeFully(fh, bytes); // runs on libuv's pool while the chunk is hashed here
    counter.update(bytes);
    await written;
  };
  await writeFileAtomic(path, async (fh) => {
    await put(fh, plan.headerBytes);
    for (const t of plan.tensors) {
      const n = elementCount(t.shape);
      for (let start = 0; start < n; start += CHUNK_ELEMENTS) {
        await put(fh, encodeElements(t.tensor, start, Math.min(n, start + CHUNK_ELEMENTS)));
      }
    }
  });
  const { size } = await stat(path);
  const digest = counter.digest();
  if (size !== plan.fileSize || digest.sizeBytes !== size)
    throw new StarpoError(`${path}: wrote ${size} bytes, expected ${plan.fileSize}`);
  return digest;
}
