/**
 * Avro object container files (Avro 1.x spec, "Object Container Files"), written and read block by
 * block. Hand-rolled rather than avsc's streams because the log needs what those hide: appending one
 * fsynced block per batch, and telling a torn tail (crash mid-write) from a readable prefix.
 *   file  = magic "Obj\x01", meta map<bytes> {avro.schema, avro.codec}, 16-byte sync marker, blocks
 *   block = long count, long byteLength, deflated records (raw RFC 1951), sync marker
 */
import { open, type FileHandle } from 'node:fs/promises';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import avro from 'avsc';
import { CorruptDataError } from '../errors.ts';

export const MAGIC = Buffer.from('Obj\x01', 'latin1');
const SYNC_BYTES = 16;
const LONG = avro.Type.forSchema('long');
const HEADER = avro.Type.forSchema({
  type: 'record', name: 'Header', namespace: 'org.apache.avro.file',
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
}

export function encodeHeader(schemaJson: string, sync: Buffer): Buffer {
  const meta = { 'avro.schema': Buffer.from(schemaJson), 'avro.codec': Buffer.from('deflate') };
  return HEADER.toBuffer({ magic: MAGIC, meta, sync });
}

/** One block holding already-encoded records, deflated, terminated by the file's sync marker. */
export function encodeBlock(records: readonly Buffer[], sync: Buffer): Buffer {
  const data = deflateRawSync(Buffer.concat(records));
  return Buffer.concat([LONG.toBuffer(records.length), LONG.toBuffer(data.length), data, sync]);
}

/** Parses a header from the start of `buf`; undefined when `buf` is too short to hold all of it. */
export function decodeHeader(buf: Buffer): ContainerHeader | undefined {
  if (buf.length >= MAGIC.length && !buf.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw new CorruptDataError('not an Avro object container file (bad magic)');
  }
  const { value, offset } = HEADER.decode(buf, 0);
  if (offset < 0) return undefined;
  const meta = (value as { meta: Record<string, Buffer> }).meta;
  const codec = meta['avro.codec']?.toString() ?? 'null';
  if (codec !== 'deflate' && codec !== 'null') throw new CorruptDataError(`unsupported Avro codec ${codec}`);
  const schema = meta['avro.schema'];
  if (schema === undefined) throw new CorruptDataError('Avro container header has no avro.schema');
  const sync = Buffer.from((value as { sync: Buffer }).sync);
  return { schemaJson: schema.toString(), codec, sync, byteLength: offset };
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
  | { ok: true }
  | { ok: false; kind: 'torn-tail' | 'corrupt-block'; byteOffset: number; message: string };

async function readAt(file: FileHandle, position: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  const { bytesRead } = await file.read(buf, 0, length, position);
  return buf.subarray(0, bytesRead);
}

/** Reads the header, growing the read until it fits (schemas are a few KiB). */
export async function readHeader(file: FileHandle, fileSize: number): Promise<ContainerHeader | undefined> {
  for (let want = 8192; ; want *= 4) {
    const header = decodeHeader(await readAt(file, 0, Math.min(want, fileSize)));
    if (header !== undefined || want >= fileSize) return header;
  }
}

/** Decodes count and byte length at `offset`; undefined when the file ends inside them. */
type BlockPrefix = { count: number; size: number; at: number };

async function readBlockPrefix(file: FileHandle, offset: number): Promise<BlockPrefix | undefined> {
  const head = await readAt(file, offset, 20); // two zig-zag varint longs take at most 10 bytes each
  const count = LONG.decode(head, 0);
  if (count.offset < 0) return undefined;
  const size = LONG.decode(head, count.offset);
  if (size.offset < 0) return undefined;
  return { count: count.value as number, size: size.value as number, at: offset + size.offset };
}

/**
 * Yields every readable block after the header, then returns how reading ended. A block that runs
 * past the end of the file, or the last block when it fails its checks, is a torn tail; a bad block
 * with more data after it is corruption. Either way nothing after it in this file is trusted.
 */
export async function* readBlocks(
  file: FileHandle, header: ContainerHeader, fileSize: number,
): AsyncGenerator<Block, BlockEnd> {
  for (let offset = header.byteLength; offset < fileSize;) {
    const fail = (message: string, end: number): BlockEnd =>
      ({ ok: false, kind: end >= fileSize ? 'torn-tail' : 'corrupt-block', byteOffset: offset, message });
    const prefix = await readBlockPrefix(file, offset);
    if (prefix === undefined) return fail('file ends inside a block header', fileSize);
    const end = prefix.at + prefix.size + SYNC_BYTES;
    if (prefix.count < 0 || prefix.size < 0 || end > fileSize) {
      return fail(`block of ${prefix.size} bytes runs past the end of the file`, end);
    }
    const body = await readAt(file, prefix.at, prefix.size + SYNC_BYTES);
    if (!body.subarray(prefix.size).equals(header.sync)) return fail('sync marker mismatch', end);
    let data: Buffer;
    try {
      data = header.codec === 'deflate' ? inflateRawSync(body.subarray(0, prefix.size)) : body.subarray(0, prefix.size);
    } catch (err) {
      return fail(`block does not inflate: ${(err as Error).message}`, end);
    }
    yield { offset, count: prefix.count, data };
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
