/**
 * The safetensors header: an 8-byte little-endian length N, then N bytes of JSON mapping each tensor name to
 * {dtype, shape, data_offsets: [begin, end]} (offsets relative to the data section that follows the header),
 * plus an optional "__metadata__" map of strings. Hugging Face pads the JSON with spaces so the data section
 * starts on an 8-byte boundary; we do the same and order tensors by element size so every tensor is aligned.
 * Parsing validates everything a reader relies on, so a damaged file fails here with a CorruptDataError.
 */
import { CorruptDataError, StarpoError } from '../../errors.ts';
import { DTYPE_BYTES, checkTensor, elementCount, isDType, type DType, type Tensor } from './dtype.ts';

export interface TensorInfo {
  readonly name: string;
  readonly dtype: DType;
  readonly shape: readonly number[];
  /** Byte offsets relative to the start of the data section. */
  readonly begin: number;
  readonly end: number;
}

export interface SafetensorsHeader {
  /** Tensors in data order (ascending `begin`). */
  readonly tensors: readonly TensorInfo[];
  readonly metadata: Readonly<Record<string, string>>;
  /** Absolute file offset of the data section: 8 + header length. */
  readonly dataStart: number;
}

/** Headers beyond this are refused before allocating (the reference implementation uses the same cap). */
export const MAX_HEADER_BYTES = 100_000_000;

/** Reads the header length from the first 8 bytes and checks it against the file size. */
export function parseHeaderLength(prefix: Uint8Array, fileSize: number, source: string): number {
  if (fileSize < 8 || prefix.length < 8) {
    throw new CorruptDataError(`${source}: truncated safetensors file (${fileSize} bytes, needs at least 8)`);
  }
  const n = new DataView(prefix.buffer, prefix.byteOffset, 8).getBigUint64(0, true);
  if (n > BigInt(MAX_HEADER_BYTES)) throw new CorruptDataError(`${source}: header length ${n} exceeds the limit`);
  if (8n + n > BigInt(fileSize)) {
    throw new CorruptDataError(`${source}: header length ${n} runs beyond the end of the ${fileSize}-byte file`);
  }
  return Number(n);
}

/** Parses and validates the JSON header; `dataLength` is the file size minus 8 minus the header length. */
export function parseHeaderJson(json: Uint8Array, dataLength: number, source: string): SafetensorsHeader {
  let raw: unknown;
  try {
    raw = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(json));
  } catch (cause) {
    throw new CorruptDataError(`${source}: header is not valid UTF-8 JSON`, { cause });
  }
  if (!isPlainObject(raw)) throw new CorruptDataError(`${source}: header is not a JSON object`);
  let metadata: Record<string, string> = {};
  const tensors: TensorInfo[] = [];
  for (const [name, entry] of Object.entries(raw)) {
    if (name === '__metadata__') metadata = parseMetadata(entry, source);
    else tensors.push(parseEntry(name, entry, source));
  }
  tensors.sort((a, b) => a.begin - b.begin || a.end - b.end);
  let previousEnd = 0;
  let previousName = '';
  for (const t of tensors) {
    if (t.end > dataLength) {
      const span = `data_offsets [${t.begin}, ${t.end}]`;
      const section = `data section is ${dataLength} bytes`;
      throw new CorruptDataError(`${source}: tensor ${t.name} ${span} out of bounds (${section})`);
    }
    if (t.begin < previousEnd) throw new CorruptDataError(`${source}: tensors ${previousName} and ${t.name} overlap`);
    if (t.end > t.begin) {
      previousEnd = t.end;
      previousName = t.name;
    }
  }
  return { tensors, metadata, dataStart: 8 + json.length };
}

function parseMetadata(entry: unknown, source: string): Record<string, string> {
  if (!isPlainObject(entry)) throw new CorruptDataError(`${source}: __metadata__ is not an object`);
  for (const [key, value] of Object.entries(entry)) {
    if (typeof value !== 'string') throw new CorruptDataError(`${source}: __metadata__.${key} is not a string`);
  }
  return entry as Record<string, string>;
}

function parseEntry(name: string, entry: unknown, source: string): TensorInfo {
  const where = `${source}: tensor ${name}`;
  if (!isPlainObject(entry)) throw new CorruptDataError(`${where}: entry is not an object`);
  const { dtype, shape, data_offsets: offsets } = entry;
  if (!isDType(dtype)) throw new CorruptDataError(`${where}: unknown dtype ${JSON.stringify(dtype)}`);
  if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
    throw new CorruptDataError(`${where}: shape ${JSON.stringify(shape)} is not a list of non-negative integers`);
  }
  if (
    !Array.isArray(offsets) ||
    offsets.length !== 2 ||
    !offsets.every((o) => Number.isSafeInteger(o) && o >= 0) ||
    offsets[0] > offsets[1]
  ) {
    throw new CorruptDataError(
      `${where}: data_offsets ${JSON.stringify(offsets)} are not [begin, end] with begin <= end`,
    );
  }
  const [begin, end] = offsets as [number, number];
  const expected = elementCount(shape) * DTYPE_BYTES[dtype];
  if (end - begin !== expected) {
    throw new CorruptDataError(
      `${where}: shape [${shape}] of ${dtype} needs ${expected} bytes but data_offsets span ${end - begin}`,
    );
  }
  return { name, dtype, shape: shape as number[], begin, end };
}

/** One tensor's place in a file being written. */
export interface PlannedTensor extends TensorInfo {
  readonly tensor: Tensor;
}

export interface HeaderPlan {
  /** The 8-byte length prefix followed by the padded JSON header. */
  readonly headerBytes: Uint8Array;
  readonly tensors: readonly PlannedTensor[];
  /** Total file size in bytes. */
  readonly fileSize: number;
}

/**
 * Lays out the tensors (largest element size first, then by name, so each is aligned to its element size)
 * and builds the header bytes. Validates every tensor against its dtype and shape.
 */
export function planSafetensors(
  tensors: Iterable<readonly [string, Tensor]>,
  metadata: Readonly<Record<string, string>> = {},
): HeaderPlan {
  const entries = [...tensors];
  const names = new Set<string>();
  for (const [name, tensor] of entries) {
    if (name === '' || name === '__metadata__') throw new StarpoError(`invalid tensor name ${JSON.stringify(name)}`);
    if (names.has(name)) throw new StarpoError(`duplicate tensor name ${name}`);
    names.add(name);
    checkTensor(name, tensor);
  }
  for (const [key, value] of Object.entries(metadata)) {
    if (typeof value !== 'string') throw new StarpoError(`metadata ${key} must be a string`);
  }
  entries.sort(([a, x], [b, y]) => DTYPE_BYTES[y.dtype] - DTYPE_BYTES[x.dtype] || (a < b ? -1 : a > b ? 1 : 0));
  let offset = 0;
  const planned: PlannedTensor[] = entries.map(([name, tensor]) => {
    const begin = offset;
    offset += elementCount(tensor.shape) * DTYPE_BYTES[tensor.dtype];
    return { name, dtype: tensor.dtype, shape: [...tensor.shape], begin, end: offset, tensor };
  });
  // Built by hand rather than JSON.stringify(object): object keys that look like integers would be reordered.
  const parts: string[] = [];
  if (Object.keys(metadata).length > 0) parts.push(`"__metadata__":${JSON.stringify(metadata)}`);
  for (const t of planned) {
    parts.push(
      `${JSON.stringify(t.name)}:${JSON.stringify({ dtype: t.dtype, shape: t.shape, data_offsets: [t.begin, t.end] })}`,
    );
  }
  const json = new TextEncoder().encode(`{${parts.join(',')}}`);
  const padded = json.length + ((8 - (json.length % 8)) % 8);
  const headerBytes = new Uint8Array(8 + padded).fill(0x20, 8 + json.length);
  new DataView(headerBytes.buffer).setBigUint64(0, BigInt(padded), true);
  headerBytes.set(json, 8);
  return { headerBytes, tensors: planned, fileSize: headerBytes.length + offset };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
