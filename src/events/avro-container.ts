/**
 * Avro object container files (Avro 1.x spec, "Object Container Files"), written and read block by
 * block. Hand-rolled rather than avsc's streams because the log needs what those hide: appending one
 * fsynced block per batch, and telling a torn tail (crash mid-write) from a readable prefix.
 *   file  = magic "Obj\x01", meta map<bytes> {avro.schema, avro.codec, starpo.segment}, 16-byte sync marker, blocks
 *   block = long count, long byteLength, deflated records (raw RFC 1951), sync marker
 * Nothing read is trusted before it is checked against the bytes that hold it: the header is walked by
 * avro-bounds.ts before avsc decodes it, a block's count and size are checked against the file, and
 * inflating stops at MAX_BLOCK_BYTES.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { constants as zlib, deflateRawSync, inflateRawSync } from 'node:zlib';
import avro from 'avsc';
import { CorruptDataError, StarpoError } from '../errors.ts';
import { checkEncoded, TruncatedDataError } from './avro-bounds.ts';

export const MAGIC = Buffer.from('Obj\x01', 'latin1');
const SYNC_BYTES = 16;
/** A block's records, inflated, may take at most this much (one append of one run; real ones take a few MB). */
export const MAX_BLOCK_BYTES = 256 * 1024 * 1024;
/** A header (schema JSON of a few KiB) that does not end within this many bytes is corrupt. */
const MAX_HEADER_BYTES = 1024 * 1024;
/** Header metadata: the segment's sequence number in its run (absent in logs written before the index). */
export const SEGMENT_META = 'starpo.segment';
const LONG = avro.Type.forSchema('long');
const HEADER = avro.Type.forSchema({
  type: 'record',
  name: 'Header',
  namespace: 'org.apache.avro.file',
  fields: [
    { name: 'magic', type: { type: 'fixed', name: 'Magic', size: 4 } },
    { name: 'meta', type: { type: 'map', values: 'bytes' } },
    { name: 'sync', type: { type: 'fixed', name: 'Sync', size: SYNC_BYTES } },
  ],
});

export interface ContainerHeader {
  /** The writer's schema, as stored in the file. */
  schemaJson: string;
  codec: string;
  sync: Buffer;
  /** Bytes the header occupies; the first block starts here. */
  byteLength: number;
  /** The segment's sequence number (SEGMENT_META), or undefined in segments written before the index. */
  segment: number | undefined;
}

/** A header; `segment` (the sequence number in its run) goes into the metadata when given. */
export function encodeHeader(schemaJson: string, sync: Buffer, segment?: number): Buffer {
  const meta: Record<string, Buffer> = { 'avro.schema': Buffer.from(schemaJson), 'avro.codec': Buffer.from('deflate') };
  if (segment !== undefined) meta[SEGMENT_META] = Buffer.from(String(segment));
  return HEADER.toBuffer({ magic: MAGIC, meta, sync });
}

/** One block holding already-encoded records, deflated, terminated by the file's sync marker. */
export function encodeBlock(records: readonly Buffer[], sync: Buffer): Buffer {
  const raw = Buffer.concat(records);
  if (raw.length > MAX_BLOCK_BYTES) {
    throw new StarpoError(`an event batch of ${raw.length} bytes is over the ${MAX_BLOCK_BYTES}-byte block limit`);
  }
  const data = deflateRawSync(raw);
  return Buffer.concat([LONG.toBuffer(records.length), LONG.toBuffer(data.length), data, sync]);
}

function segmentNumber(meta: Record<string, Buffer>): number | undefined {
  const text = meta[SEGMENT_META]?.toString();
  if (text === undefined) return undefined;
  if (!/^\d{1,9}$/.test(text)) throw new CorruptDataError(`segment number "${text}" in the header is not a number`);
  return Number(text);
}

/** Parses a header from the start of `buf`; undefined when `buf` is too short to hold all of it. */
export function decodeHeader(buf: Buffer): ContainerHeader | undefined {
  if (buf.length >= MAGIC.length && !buf.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw new CorruptDataError('not an Avro object container file (bad magic)');
  }
  try {
    checkEncoded(HEADER, buf, 0);
  } catch (err) {
    if (err instanceof TruncatedDataError && buf.length < MAX_HEADER_BYTES) return undefined;
    throw new CorruptDataError(`Avro container header: ${(err as Error).message}`, { cause: err });
  }
  const { value, offset } = HEADER.decode(buf, 0);
  const meta = (value as { meta: Record<string, Buffer> }).meta;
  const codec = meta['avro.codec']?.toString() ?? 'null';
  if (codec !== 'deflate' && codec !== 'null') throw new CorruptDataError(`unsupported Avro codec ${codec}`);
  const schema = meta['avro.schema'];
  if (schema === undefined) throw new CorruptDataError('Avro container header has no avro.schema');
  const sync = Buffer.from((value as { sync: Buffer }).sync);
  return { schemaJson: schema.toString(), codec, sync, byteLength: offset, segment: segmentNumber(meta) };
}

export interface Block {
  /** Byte offset of the block in the file. */
  offset: number;
  count: number;
  /** The block's records, decompressed, back to back. */
  data: Buffer;
}

/** How reading a file ended: cleanly, or at a block that could not be read (and why). */
export type BlockEnd =
  { ok: true } | { ok: false; kind: 'torn-tail' | 'corrupt-block'; byteOffset: number; message: string };

export async function readAt(file: FileHandle, position: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  const { bytesRead } = await file.read(buf, 0, length, position);
  return buf.subarray(0, bytesRead);
}

/** Reads the header, growing the read until it fits (schemas are a few KiB). */
export async function readHeader(file: FileHandle, fileSize: number): Promise<ContainerHeader | undefined> {
  for (let want = 8192; ; want *= 4) {
    const length = Math.min(want, fileSize, MAX_HEADER_BYTES);
    const header = decodeHeader(await readAt(file, 0, length));
    if (header !== undefined || length >= fileSize) return header;
  }
}

/** Count, byte length and where the data starts, from a block's first bytes; undefined when they end too soon. */
type BlockPrefix = { count: number; size: number; dataAt: number };

function blockPrefix(head: Buffer): BlockPrefix | undefined {
  const count = LONG.decode(head, 0);
  if (count.offset < 0) return undefined;
  const size = LONG.decode(head, count.offset);
  if (size.offset < 0) return undefined;
  return { count: count.value as number, size: size.value as number, dataAt: size.offset };
}

/**
 * The block in `bytes` (exactly one block, starting at file offset `offset`): its prefix must account for
 * every byte, end with the file's sync marker, and inflate to at most MAX_BLOCK_BYTES holding at least one
 * byte per record. CorruptDataError otherwise.
 */
export function parseBlock(bytes: Buffer, header: ContainerHeader, offset: number): Block {
  const prefix = blockPrefix(bytes.subarray(0, 20)); // two zig-zag varint longs take at most 10 bytes each
  if (prefix === undefined) throw new CorruptDataError('block ends inside its count and size');
  const { count, size, dataAt } = prefix;
  if (count < 0 || size < 0 || dataAt + size + SYNC_BYTES !== bytes.length) {
    throw new CorruptDataError(`block says ${count} records in ${size} bytes, but it holds ${bytes.length} bytes`);
  }
  if (!bytes.subarray(dataAt + size).equals(header.sync)) throw new CorruptDataError('sync marker mismatch');
  const raw = bytes.subarray(dataAt, dataAt + size);
  let data: Buffer;
  try {
    data = header.codec === 'deflate' ? inflateRawSync(raw, { maxOutputLength: MAX_BLOCK_BYTES }) : raw;
  } catch (err) {
    throw new CorruptDataError(`block does not inflate: ${(err as Error).message}`, { cause: err });
  }
  if (count > data.length) throw new CorruptDataError(`block claims ${count} records in ${data.length} bytes`);
  return { offset, count, data };
}

/**
 * What the bytes after a segment's last indexed block are. The writer indexes each block once it is durable
 * and a failed append abandons the segment, so a crash leaves at most one append behind the index: a block cut
 * short (`cut-block`: what was written is the start of a block) or a whole one whose index line never came
 * (`whole-block`), or zeros where the file system grew the file before the data reached it (`zeros`). Anything
 * else (bytes that start no block, or more after one) is `foreign`: no writer of this log put it there.
 */
export type TailKind = 'cut-block' | 'whole-block' | 'zeros' | 'foreign';

/** The longest tail one block can make: the writer's limit on records, plus deflate's worst-case growth. */
export const MAX_TAIL_BYTES = MAX_BLOCK_BYTES + (MAX_BLOCK_BYTES >> 8) + 64;

export function tailKind(tail: Buffer, header: ContainerHeader): TailKind {
  if (tail.every((b) => b === 0)) return 'zeros';
  const count = LONG.decode(tail, 0);
  if (count.offset >= 0 && (count.value as number) <= 0) return 'foreign'; // every append holds an event
  const prefix = blockPrefix(tail.subarray(0, 20));
  if (prefix === undefined) return tail.length < 20 ? 'cut-block' : 'foreign';
  const { size, dataAt } = prefix;
  const end = dataAt + size + SYNC_BYTES;
  if (size <= 0 || end < tail.length) return 'foreign';
  if (end === tail.length) {
    try {
      parseBlock(tail, header, 0);
      return 'whole-block';
    } catch {
      return 'foreign';
    }
  }
  const written = tail.subarray(dataAt + size);
  if (!header.sync.subarray(0, written.length).equals(written)) return 'foreign';
  if (header.codec !== 'deflate') return 'cut-block';
  try {
    // A prefix of a deflate stream inflates (as far as it goes) without error; most other bytes do not.
    inflateRawSync(tail.subarray(dataAt, dataAt + size), {
      finishFlush: zlib.Z_SYNC_FLUSH,
      maxOutputLength: MAX_BLOCK_BYTES,
    });
    return 'cut-block';
  } catch {
    return 'foreign';
  }
}

/**
 * Yields every readable block after the header, then returns how reading ended. A block that runs
 * past the end of the file, or the last block when it fails its checks, is a torn tail; a bad block
 * with more data after it is corruption. Either way nothing after it in this file is trusted.
 */
export async function* readBlocks(
  file: FileHandle,
  header: ContainerHeader,
  fileSize: number,
): AsyncGenerator<Block, BlockEnd> {
  for (let offset = header.byteLength; offset < fileSize;) {
    const fail = (message: string, end: number): BlockEnd => ({
      ok: false,
      kind: end >= fileSize ? 'torn-tail' : 'corrupt-block',
      byteOffset: offset,
      message,
    });
    const prefix = blockPrefix(await readAt(file, offset, 20));
    if (prefix === undefined) return fail('file ends inside a block header', fileSize);
    const end = offset + prefix.dataAt + prefix.size + SYNC_BYTES;
    if (prefix.count < 0 || prefix.size < 0 || end > fileSize) {
      return fail(`block of ${prefix.size} bytes runs past the end of the file`, end);
    }
    let block: Block;
    try {
      block = parseBlock(await readAt(file, offset, end - offset), header, offset);
    } catch (err) {
      return fail((err as Error).message, end);
    }
    yield block;
    offset = end;
  }
  return { ok: true };
}

/** Opens a file for block reading; `header` is undefined when the file is empty or its header is incomplete. */
export async function openContainer(
  path: string,
): Promise<{ file: FileHandle; header: ContainerHeader | undefined; size: number }> {
  const file = await open(path, 'r');
  const { size } = await file.stat();
  try {
    return { file, header: size === 0 ? undefined : await readHeader(file, size), size };
  } catch (err) {
    await file.close();
    throw err;
  }
}
