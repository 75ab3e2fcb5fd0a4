/**
 * Just enough of the zip format to take named libraries out of a wheel: the central directory (zip64
 * included) and streamed inflation of one member to a file. Wheels are plain zip files, and streaming
 * keeps a 540 MB library out of memory; no unzip or Python is needed for this step.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { open, rename, rm, writeFile } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { createInflateRaw } from 'node:zlib';
import { PackageError } from '../errors.ts';

export interface ZipEntry {
  readonly name: string;
  /** 0 = stored, 8 = deflate. */
  readonly method: number;
  readonly compressedSize: number;
  readonly size: number;
  readonly localOffset: number;
}

const EOCD = 0x06054b50;
const ZIP64_LOCATOR = 0x07064b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
const MAX32 = 0xffffffff;

async function readAt(path: string, offset: number, length: number): Promise<Buffer> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(length);
    const { bytesRead } = await fh.read(buf, 0, length, offset);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/** Where the central directory is and how many entries it has (from the end record, or its zip64 form). */
async function centralDirectory(
  path: string,
  fileSize: number,
): Promise<{ offset: number; size: number; count: number }> {
  const tailStart = Math.max(0, fileSize - 22 - 0xffff);
  const tail = await readAt(path, tailStart, fileSize - tailStart);
  let at = tail.length - 22;
  while (at >= 0 && tail.readUInt32LE(at) !== EOCD) at--;
  if (at < 0) throw new PackageError(`${path} is not a zip file (no end-of-central-directory record)`);
  const [count, size, offset] = [tail.readUInt16LE(at + 10), tail.readUInt32LE(at + 12), tail.readUInt32LE(at + 16)];
  if (count !== 0xffff && size !== MAX32 && offset !== MAX32) return { offset, size, count };
  if (at < 20 || tail.readUInt32LE(at - 20) !== ZIP64_LOCATOR)
    throw new PackageError(`${path}: zip64 sizes without a zip64 locator`);
  const record = await readAt(path, Number(tail.readBigUInt64LE(at - 12)), 56);
  return {
    count: Number(record.readBigUInt64LE(32)),
    size: Number(record.readBigUInt64LE(40)),
    offset: Number(record.readBigUInt64LE(48)),
  };
}

/** Sizes and offset an entry's zip64 extra field carries in place of 0xffffffff, in the format's order. */
function zip64Fields(extra: Buffer, want: { size: boolean; compressed: boolean; offset: boolean }) {
  for (let at = 0; at + 4 <= extra.length; at += 4 + extra.readUInt16LE(at + 2)) {
    if (extra.readUInt16LE(at) !== 0x0001) continue;
    let p = at + 4;
    const next = (): number => {
      const v = Number(extra.readBigUInt64LE(p));
      p += 8;
      return v;
    };
    return {
      size: want.size ? next() : undefined,
      compressed: want.compressed ? next() : undefined,
      offset: want.offset ? next() : undefined,
    };
  }
  throw new PackageError('zip entry has 0xffffffff sizes but no zip64 extra field');
}

export async function listZip(path: string): Promise<ZipEntry[]> {
  const fh = await open(path, 'r');
  const fileSize = (await fh.stat()).size;
  await fh.close();
  const cd = await centralDirectory(path, fileSize);
  const buf = await readAt(path, cd.offset, cd.size);
  const entries: ZipEntry[] = [];
  for (let at = 0, i = 0; i < cd.count; i++) {
    if (buf.readUInt32LE(at) !== CENTRAL) throw new PackageError(`${path}: damaged central directory (entry ${i})`);
    const [nameLen, extraLen, commentLen] = [
      buf.readUInt16LE(at + 28),
      buf.readUInt16LE(at + 30),
      buf.readUInt16LE(at + 32),
    ];
    let [compressedSize, size, localOffset] = [
      buf.readUInt32LE(at + 20),
      buf.readUInt32LE(at + 24),
      buf.readUInt32LE(at + 42),
    ];
    const name = buf.toString('utf8', at + 46, at + 46 + nameLen);
    if (compressedSize === MAX32 || size === MAX32 || localOffset === MAX32) {
      const z = zip64Fields(buf.subarray(at + 46 + nameLen, at + 46 + nameLen + extraLen), {
        size: size === MAX32,
        compressed: compressedSize === MAX32,
        offset: localOffset === MAX32,
      });
      [size, compressedSize, localOffset] = [z.size ?? size, z.compressed ?? compressedSize, z.offset ?? localOffset];
    }
    entries.push({ name, method: buf.readUInt16LE(at + 10), compressedSize, size, localOffset });
    at += 46 + nameLen + extraLen + commentLen;
  }
  return entries;
}

/** Counts the bytes passing through, so a short or long member is caught before the rename. */
function counter(): Transform & { bytes: number } {
  const t = new Transform({
    transform(chunk: Buffer, _enc, done) {
      t.bytes += chunk.length;
      done(null, chunk);
    },
  }) as Transform & { bytes: number };
  t.bytes = 0;
  return t;
}

/** Writes one member to `dest` (through a temporary name, so an interrupted write never looks complete). */
export async function extractEntry(path: string, entry: ZipEntry, dest: string): Promise<void> {
  if (entry.method !== 0 && entry.method !== 8)
    throw new PackageError(`${path}: ${entry.name} uses zip method ${entry.method} (only stored and deflate)`);
  const local = await readAt(path, entry.localOffset, 30);
  if (local.readUInt32LE(0) !== LOCAL) throw new PackageError(`${path}: no local header for ${entry.name}`);
  const start = entry.localOffset + 30 + local.readUInt16LE(26) + local.readUInt16LE(28);
  if (entry.size === 0) return writeFile(dest, '');
  const tmp = `${dest}.partial`;
  const count = counter();
  const read = createReadStream(path, { start, end: start + entry.compressedSize - 1 });
  try {
    await pipeline(
      entry.method === 8
        ? [read, createInflateRaw(), count, createWriteStream(tmp)]
        : [read, count, createWriteStream(tmp)],
    );
    if (count.bytes !== entry.size)
      throw new PackageError(`${path}: ${entry.name} unpacked to ${count.bytes} bytes, expected ${entry.size}`);
    await rename(tmp, dest);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}
