/**
 * A run's segment index, events/segments.index: the writer appends one line per byte range it made
 * durable, after the range itself is fsynced, so the index lists exactly what appends acknowledged.
 *   line  = <16 hex: SHA-256 of the JSON, truncated> " " <JSON> "\n"
 *   JSON  = {"seg":3,"at":0,"len":6805,"n":0,"sha":"<32 hex: SHA-256 of the range, truncated>"}
 * A segment's first line covers its header (at 0, n 0); every later line covers the next block, so a
 * segment's lines tile it from byte 0. Readers check each range's digest before decoding it, and the
 * index tells them what must be there: a missing, emptied, truncated or swapped segment, a flipped
 * byte anywhere, and how many events are lost from that point on. A last line without its newline is a
 * write cut by a crash (that append never resolved); the next writer removes it before appending.
 */
import { createHash } from 'node:crypto';
import { open, readFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

export const INDEX_FILE = 'segments.index';

export interface IndexEntry {
  seg: number;
  at: number;
  len: number;
  /** Events in the range (0 for a header). */
  n: number;
  sha: string;
}

/** Truncated lower-case hex SHA-256: 128 bits for data ranges, 64 for index lines. */
export function digest(bytes: Buffer | string, hexChars = 32): string {
  return createHash('sha256').update(bytes).digest('hex').slice(0, hexChars);
}

export function entryFor(seg: number, at: number, bytes: Buffer, n: number): IndexEntry {
  return { seg, at, len: bytes.length, n, sha: digest(bytes) };
}

export function formatEntry(e: IndexEntry): string {
  const json = JSON.stringify({ seg: e.seg, at: e.at, len: e.len, n: e.n, sha: e.sha });
  return `${digest(json, 16)} ${json}\n`;
}

/** Where the index stops being trustworthy: a damaged or inconsistent complete line. */
export interface IndexDamage {
  line: number;
  byteOffset: number;
  message: string;
}

export interface ParsedIndex {
  /** Entries of the trusted lines, in file order. */
  entries: IndexEntry[];
  damage: IndexDamage | undefined;
  /** Byte offset of a last line cut by a crash, if any. */
  tornAt: number | undefined;
}

const isCount = (x: unknown): x is number => Number.isSafeInteger(x) && (x as number) >= 0;

function parseLine(line: string): IndexEntry | string {
  const space = line.indexOf(' ');
  const json = line.slice(space + 1);
  if (space !== 16 || digest(json, 16) !== line.slice(0, 16)) return 'line fails its checksum';
  let e: Partial<IndexEntry>;
  try {
    e = JSON.parse(json) as Partial<IndexEntry>;
  } catch {
    return 'line is not JSON';
  }
  const shaOk = typeof e.sha === 'string' && /^[0-9a-f]{32}$/.test(e.sha);
  const fieldsOk = [e.seg, e.at, e.len, e.n].every(isCount) && shaOk;
  return fieldsOk ? (e as IndexEntry) : 'line has a malformed entry';
}

/** Parses and checks the index text: digests, and that each segment's lines tile it from its header on. */
export function parseIndex(bytes: Buffer): ParsedIndex {
  const entries: IndexEntry[] = [];
  const ends = new Map<number, number>();
  let offset = 0;
  for (let line = 1; offset < bytes.length; line++) {
    const nl = bytes.indexOf(0x0a, offset);
    if (nl < 0) return { entries, damage: undefined, tornAt: offset };
    const parsed = parseLine(bytes.subarray(offset, nl).toString('utf8'));
    const problem = typeof parsed === 'string' ? parsed : misplaced(parsed, ends);
    if (problem !== undefined) {
      return { entries, damage: { line, byteOffset: offset, message: problem }, tornAt: undefined };
    }
    const entry = parsed as IndexEntry;
    ends.set(entry.seg, entry.at + entry.len);
    entries.push(entry);
    offset = nl + 1;
  }
  return { entries, damage: undefined, tornAt: undefined };
}

function misplaced(e: IndexEntry, ends: Map<number, number>): string | undefined {
  const end = ends.get(e.seg);
  if (end === undefined && e.at !== 0) return `segment ${e.seg} has a block before its header`;
  if (end !== undefined && e.at !== end) return `segment ${e.seg}: range at ${e.at} does not follow its end at ${end}`;
  return undefined;
}

/** The index's bytes, or undefined when the run has none (a log written before the index existed). */
export async function readIndexFile(dir: string): Promise<Buffer | undefined> {
  return readFile(join(dir, INDEX_FILE)).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
}

/** Appends entries to a run's index, each fsynced before append resolves. */
export class IndexWriter {
  private constructor(
    private readonly file: FileHandle,
    readonly lastSegment: number,
  ) {}

  /** Opens (or creates) the index, first cutting off a last line a crash left unfinished. */
  static async open(dir: string): Promise<IndexWriter> {
    const existing = await readIndexFile(dir);
    const parsed = existing === undefined ? undefined : parseIndex(existing);
    const file = await open(join(dir, INDEX_FILE), 'a');
    try {
      if (parsed?.tornAt !== undefined) {
        await file.truncate(parsed.tornAt);
        await file.sync();
      }
      const lastSegment = Math.max(0, ...(parsed?.entries ?? []).map((e) => e.seg));
      return new IndexWriter(file, lastSegment);
    } catch (err) {
      await file.close();
      throw err;
    }
  }

  async append(entry: IndexEntry): Promise<void> {
    await this.file.write(formatEntry(entry));
    await this.file.sync();
  }

  close(): Promise<void> {
    return this.file.close();
  }
}
