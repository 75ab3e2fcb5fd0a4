/**
 * The embedded event log: Avro object container files under <root>/<run-id>/events/, deflate codec.
 * Each append writes one block per run and fsyncs it before resolving, so a crash loses at most the
 * batch being written. Every writer starts a new segment file (00000001.avro, 00000002.avro, …)
 * instead of appending to an old one: the old file may end in a torn block, and blocks written after
 * it would be unreachable for readers that stop at the tear. Each segment carries its sequence number in
 * its header, and every range written (header, then each block) is listed with its digest in the run's
 * segment index (segment-index.ts) once it is durable, which makes the log tamper-evident.
 */
import { mkdir, open, readdir, type FileHandle } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { StarpoError } from '../errors.ts';
import { encodeEvent } from './codec.ts';
import { encodeBlock, encodeHeader } from './avro-container.ts';
import { assertSafeId } from './ids.ts';
import { entryFor, IndexWriter } from './segment-index.ts';
import { schemaRegistry } from './schemas.ts';
import type { EventLog, StarpoEvent } from './types.ts';

export interface LocalEventLogOptions {
  /** Directory holding one folder per run (default "runs"). */
  root?: string;
}

export const SEGMENT_PATTERN = /^(\d{8})\.avro$/;

export function eventsDir(root: string, runId: string): string {
  assertSafeId('runId', runId);
  return join(root, runId, 'events');
}

/** fsync a directory so a file created in it survives a crash (its entry is data of the directory). */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** One open segment: header written at creation, then one fsynced and indexed block per append. */
class SegmentWriter {
  private broken = false;
  private constructor(
    readonly path: string,
    private readonly file: FileHandle,
    private readonly index: IndexWriter,
    private readonly seq: number,
    private position: number,
    private readonly sync: Buffer,
  ) {}

  /** Creates the next free segment in `dir` (exclusive create, so two writers never share one) and indexes it. */
  static async create(dir: string): Promise<SegmentWriter> {
    await mkdir(dir, { recursive: true });
    const index = await IndexWriter.open(dir); // created before the segment: the directory sync below covers both
    try {
      const taken = (await readdir(dir)).flatMap((f) => SEGMENT_PATTERN.exec(f)?.[1] ?? []).map(Number);
      // The index may name segments whose files are gone: never reuse their numbers.
      for (let seq = Math.max(index.lastSegment, ...taken) + 1; ; seq++) {
        const segment = await SegmentWriter.tryCreate(dir, seq, index);
        if (segment !== undefined) return segment;
      }
    } catch (err) {
      await index.close();
      throw err;
    }
  }

  private static async tryCreate(dir: string, seq: number, index: IndexWriter): Promise<SegmentWriter | undefined> {
    const path = join(dir, `${String(seq).padStart(8, '0')}.avro`);
    const file = await open(path, 'wx').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'EEXIST') return undefined;
      throw err;
    });
    if (file === undefined) return undefined;
    try {
      const sync = randomBytes(16);
      const header = encodeHeader(JSON.stringify(schemaRegistry().current.json), sync, seq);
      await file.write(header, 0, header.length, 0);
      await file.sync();
      await syncDirectory(dir);
      await index.append(entryFor(seq, 0, header, 0));
      return new SegmentWriter(path, file, index, seq, header.length, sync);
    } catch (err) {
      await file.close();
      throw err;
    }
  }

  get usable(): boolean {
    return !this.broken;
  }

  /** Writes the records as one block, fsyncs, then indexes it; after a failure the segment is abandoned. */
  async appendBlock(records: readonly Buffer[]): Promise<void> {
    const block = encodeBlock(records, this.sync);
    try {
      await this.file.write(block, 0, block.length, this.position);
      await this.file.sync();
      await this.index.append(entryFor(this.seq, this.position, block, records.length));
      this.position += block.length;
    } catch (err) {
      // A partial block (or index line) may be left: unindexed, readers skip it; the next append opens a new segment.
      this.broken = true;
      throw err;
    }
  }

  async close(): Promise<void> {
    await this.file.close();
    await this.index.close();
  }
}

class LocalEventLog implements EventLog {
  private readonly writers = new Map<string, SegmentWriter>();
  private tail: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(private readonly root: string) {}

  append(events: readonly StarpoEvent[]): Promise<void> {
    if (this.closed) return Promise.reject(new StarpoError('local event log: append after close'));
    // Appends run one after another so blocks never interleave; a failed append does not block later ones.
    const next = this.tail.then(() => this.appendNow(events));
    this.tail = next.catch(() => undefined);
    return next;
  }

  private async appendNow(events: readonly StarpoEvent[]): Promise<void> {
    const byRun = new Map<string, Buffer[]>();
    for (const event of events) {
      const records = byRun.get(event.runId) ?? [];
      records.push(encodeEvent(event)); // encode everything first: a bad event fails the batch before any write
      byRun.set(event.runId, records);
    }
    for (const [runId, records] of byRun) {
      const writer = await this.writerFor(runId);
      await writer.appendBlock(records).catch((cause: unknown) => {
        throw new StarpoError(`local event log: could not append ${records.length} events to ${writer.path}`, {
          cause,
          retryable: true,
          details: { runId, path: writer.path },
        });
      });
    }
  }

  private async writerFor(runId: string): Promise<SegmentWriter> {
    const current = this.writers.get(runId);
    if (current?.usable) return current;
    if (current !== undefined) await current.close().catch(() => undefined);
    const writer = await SegmentWriter.create(eventsDir(this.root, runId));
    this.writers.set(runId, writer);
    return writer;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.tail;
    await Promise.all([...this.writers.values()].map((w) => w.close()));
    this.writers.clear();
  }
}

/** The embedded event log (see the module comment). */
export function createLocalEventLog(options: LocalEventLogOptions = {}): EventLog {
  return new LocalEventLog(options.root ?? 'runs');
}
