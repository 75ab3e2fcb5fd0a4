/**
 * Reading one segment file of the local log. An indexed segment is read range by range as the index lists
 * them, each range's digest checked before a byte of it is decoded; a segment from before the index is
 * scanned block by block as the container format allows. Either way a block's events are decoded in full
 * (bounds-checked against the writer's schema first, avro-bounds.ts) before any is yielded, and the
 * generator returns the damage that ended it, if any, for the caller to handle.
 */
import { open, type FileHandle } from 'node:fs/promises';
import avro from 'avsc';
import { CorruptDataError } from '../errors.ts';
import {
  decodeHeader,
  MAX_TAIL_BYTES,
  openContainer,
  parseBlock,
  readAt,
  readBlocks,
  tailKind,
  type Block,
  type ContainerHeader,
  type TailKind,
} from './avro-container.ts';
import { decodeEventAt, writerSchema, type WriterSchema } from './codec.ts';
import type { AfterProblem } from './problems.ts';
import { digest, type IndexEntry } from './segment-index.ts';
import type { ReadProblem, ReadProblemKind, StarpoEvent } from './types.ts';

const writers = new Map<string, WriterSchema>();

/** The header's schema, parsed once per distinct schema text. */
function headerWriter(header: ContainerHeader): WriterSchema {
  let known = writers.get(header.schemaJson);
  if (known === undefined) {
    try {
      known = writerSchema(avro.Type.forSchema(JSON.parse(header.schemaJson) as avro.Schema));
    } catch (cause) {
      throw new CorruptDataError(`the header's schema does not parse: ${(cause as Error).message}`, { cause });
    }
    if (writers.size < 64) writers.set(header.schemaJson, known); // a handful of schema versions in practice
  }
  return known;
}

/** Every event of the block, or CorruptDataError: the records must decode one after another and fill it exactly. */
export function decodeRecords(block: Block, writer: WriterSchema): StarpoEvent[] {
  const events: StarpoEvent[] = [];
  let pos = 0;
  for (let i = 0; i < block.count; i++) {
    try {
      const { event, end } = decodeEventAt(block.data, pos, writer);
      events.push(event);
      pos = end;
    } catch (cause) {
      const why = `record ${i} of ${block.count} does not decode: ${(cause as Error).message}`;
      throw new CorruptDataError(why, { cause });
    }
  }
  const extra = block.data.length - pos;
  if (extra !== 0) throw new CorruptDataError(`${extra} bytes follow the block's records`);
  return events;
}

export type Report = (problem: ReadProblem) => void;

export const UNLISTED = 'a segment the index does not list (its writer stopped before indexing it)';

export function problemAt(path: string, byteOffset: number, kind: ReadProblemKind, message: string): ReadProblem {
  return { kind, message, where: `${path}@${byteOffset}`, file: path, byteOffset };
}

/** A segment's bytes, wherever they are kept: a local file, or an object read whole (a sealed segment). */
export interface SegmentBytes {
  readonly size: number;
  read(at: number, length: number): Promise<Buffer>;
  close(): Promise<void>;
}

/** A segment held in memory. */
export function bufferSegment(bytes: Buffer): SegmentBytes {
  return {
    size: bytes.length,
    read: async (at, length) => bytes.subarray(at, at + length),
    close: async () => undefined,
  };
}

/** The range's bytes once they match its digest; the file's size is checked first, so a length is never trusted. */
async function readRange(src: SegmentBytes, path: string, range: IndexEntry): Promise<Buffer | ReadProblem> {
  const { size } = src;
  if (range.at + range.len > size) {
    const what = range.at === 0 ? 'its header' : `a block of ${range.n} events`;
    const why = `the file ends at byte ${size}, inside ${what} (bytes ${range.at}-${range.at + range.len})`;
    return problemAt(path, range.at, 'truncated-segment', why);
  }
  const bytes = await src.read(range.at, range.len);
  if (digest(bytes) === range.sha) return bytes;
  if (range.at === 0) return headerMismatch(path, bytes, range.seg);
  return problemAt(path, range.at, 'checksum-mismatch', `a block of ${range.n} events fails its checksum`);
}

/** A header that fails its checksum: another segment's (files swapped or renamed), or damaged. */
function headerMismatch(path: string, bytes: Buffer, seq: number): ReadProblem {
  let holds: number | undefined;
  try {
    holds = decodeHeader(bytes)?.segment;
  } catch {
    holds = undefined;
  }
  if (holds !== undefined && holds !== seq) {
    return problemAt(path, 0, 'reordered-segment', `the file holds segment ${holds}, the index expects segment ${seq}`);
  }
  return problemAt(path, 0, 'checksum-mismatch', 'the header fails its checksum');
}

/**
 * Yields the events of an indexed segment, range by range; returns the damage that stopped it, if any.
 * Bytes after the last indexed block are reported: a note when a crash left them, else a warning (tailProblem).
 * `open` gives the segment's bytes (default: the local file at `path`; the path names it in problems).
 */
export async function* readIndexedSegment(
  path: string,
  ranges: readonly IndexEntry[],
  report: Report,
  open: (path: string) => Promise<SegmentBytes | ReadProblem> = openSegmentFile,
): AsyncGenerator<StarpoEvent[], ReadProblem | undefined> {
  const opened = await open(path);
  if ('kind' in opened) return opened;
  const file = opened;
  const { size } = file;
  try {
    if (size === 0) return problemAt(path, 0, 'empty-segment', 'the file is empty');
    const headerBytes = await readRange(file, path, ranges[0] as IndexEntry);
    if (!Buffer.isBuffer(headerBytes)) return headerBytes;
    const header = decodeHeader(headerBytes) as ContainerHeader;
    const writer = headerWriter(header);
    for (const range of ranges.slice(1)) {
      const bytes = await readRange(file, path, range);
      if (!Buffer.isBuffer(bytes)) return bytes;
      const events = decodeVerified(bytes, header, range, writer, path);
      if (!Array.isArray(events)) return events;
      yield events;
    }
    const end = (ranges.at(-1) as IndexEntry).at + (ranges.at(-1) as IndexEntry).len;
    if (size > end) report(await tailProblem(file, header, path, end, size - end));
    return undefined;
  } finally {
    await file.close();
  }
}

const TAILS: Record<TailKind, [ReadProblemKind, string]> = {
  'cut-block': ['torn-tail', 'an append a crash cut short (never acknowledged)'],
  'whole-block': ['torn-tail', 'a block a crash left before its index line (never acknowledged)'],
  zeros: ['torn-tail', 'zeros a crash left (the file grew before its data was written)'],
  foreign: [
    'foreign-bytes',
    'not an append of this log (no block its writer was writing): something else wrote to the file; ' +
      'the indexed events are intact and these bytes are ignored',
  ],
};

/** Bytes after the last indexed block: a crash's leftover is a note, anything else a warning (tailKind). */
async function tailProblem(
  file: SegmentBytes,
  header: ContainerHeader,
  path: string,
  end: number,
  bytes: number,
): Promise<ReadProblem> {
  const kind = bytes > MAX_TAIL_BYTES ? 'foreign' : tailKind(await file.read(end, bytes), header);
  const [problem, what] = TAILS[kind];
  return problemAt(path, end, problem, `${bytes} bytes after the last indexed block: ${what}`);
}

function decodeVerified(
  bytes: Buffer,
  header: ContainerHeader,
  range: IndexEntry,
  writer: WriterSchema,
  path: string,
): StarpoEvent[] | ReadProblem {
  try {
    const block = parseBlock(bytes, header, range.at);
    if (block.count !== range.n) {
      throw new CorruptDataError(`block holds ${block.count} events, the index says ${range.n}`);
    }
    return decodeRecords(block, writer);
  } catch (err) {
    if (!(err instanceof CorruptDataError)) throw err;
    return problemAt(path, range.at, 'corrupt-block', err.message);
  }
}

async function openSegmentFile(path: string): Promise<SegmentBytes | ReadProblem> {
  const file = await open(path, 'r').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (file === undefined) return problemAt(path, 0, 'missing-segment', 'the index lists it; the file is gone');
  return { size: (await file.stat()).size, read: (at, length) => readAt(file, at, length), close: () => file.close() };
}

/** How a segment without index entries relates to the run's index. */
export type Unindexed = 'no-index' | 'index-lacks-it' | 'index-damaged';

/**
 * Yields the events of a segment from before the index, block by block; returns the damage that stopped it.
 * It is reported as not tamper-evident (a note), and so is a torn tail. A segment that carries a sequence
 * number belongs in an index: with no index at all that is damage (the index is gone); when the index
 * lacks it, a writer stopped before indexing it and it holds no acknowledged events (a note; skipped);
 * after the index's damage (already reported) it is skipped.
 */
export async function* readUnindexedSegment(
  path: string,
  unindexed: Unindexed,
  report: Report,
): AsyncGenerator<StarpoEvent[], ReadProblem | undefined> {
  const opened = await openContainer(path).catch((err: unknown) => {
    if (err instanceof CorruptDataError) return problemAt(path, 0, 'corrupt-block', err.message);
    throw err;
  });
  if ('kind' in opened) return opened;
  const { file, header, size } = opened;
  try {
    if (header === undefined) {
      if (size > 0) report(problemAt(path, 0, 'torn-tail', 'the file ends inside its header'));
      return undefined;
    }
    if (header.segment !== undefined) {
      if (unindexed === 'no-index') return problemAt(path, 0, 'missing-index', 'an indexed segment, no index');
      if (unindexed === 'index-lacks-it') report(problemAt(path, 0, 'torn-tail', UNLISTED));
      return undefined;
    }
    report(
      problemAt(
        path,
        0,
        'unverified',
        'segments written before the segment index carry no checksums: ' +
          'their events are read as they are, not tamper-evident',
      ),
    );
    return yield* scanBlocks(file, header, size, path, report);
  } finally {
    await file.close();
  }
}

async function* scanBlocks(
  file: FileHandle,
  header: ContainerHeader,
  size: number,
  path: string,
  report: Report,
): AsyncGenerator<StarpoEvent[], ReadProblem | undefined> {
  let writer: WriterSchema;
  try {
    writer = headerWriter(header);
  } catch (err) {
    return problemAt(path, 0, 'corrupt-block', (err as Error).message);
  }
  const blocks = readBlocks(file, header, size);
  for (let step = await blocks.next(); ; step = await blocks.next()) {
    if (step.done) {
      const end = step.value;
      if (end.ok) return undefined;
      const problem = problemAt(path, end.byteOffset, end.kind, end.message);
      if (end.kind === 'corrupt-block') return problem;
      report(problem);
      return undefined;
    }
    try {
      yield decodeRecords(step.value, writer);
    } catch (err) {
      if (!(err instanceof CorruptDataError)) throw err;
      return problemAt(path, step.value.offset, 'corrupt-block', err.message);
    }
  }
}

/**
 * Yields a segment's events; false when damage ended the read (`handle` decided, problems.ts). With
 * `indexedEvents` (the events the index acknowledges in all), damage says how many from there on are lost;
 * `tally` counts what was delivered across the segments of one read.
 */
export async function* drainSegment(
  blocks: AsyncGenerator<StarpoEvent[], ReadProblem | undefined>,
  handle: (p: ReadProblem) => AfterProblem,
  tally: { delivered: number },
  indexedEvents?: number,
): AsyncGenerator<StarpoEvent, boolean> {
  try {
    for (let step = await blocks.next(); ; step = await blocks.next()) {
      if (step.done) {
        if (step.value === undefined) return true;
        const lost = indexedEvents === undefined ? {} : { eventsLost: indexedEvents - tally.delivered };
        return handle({ ...step.value, ...lost }) === 'read-on';
      }
      if (indexedEvents !== undefined) tally.delivered += step.value.length;
      yield* step.value;
    }
  } finally {
    await blocks.return(undefined); // a reader that stops early still closes the segment's file
  }
}
