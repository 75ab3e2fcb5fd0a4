/**
 * Reads a run's local log in order. Segments listed in the run's index (segment-index.ts) are read as it
 * lists them, every range checked against its digest; segments from before the index (older logs) are
 * read as they are, and say they are not tamper-evident. Each segment carries its writer's schema,
 * resolved into the current one. Notes (a tail a crash cut off) are reported and reading goes on; damage
 * (a changed byte, a missing, emptied, truncated or swapped segment, a damaged index) ends the read
 * with CorruptDataError, or with `allowPartial` after the intact prefix (problems.ts).
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { eventsDir, SEGMENT_PATTERN, type LocalEventLogOptions } from './local-log.ts';
import { problemHandler, type AfterProblem } from './problems.ts';
import { INDEX_FILE, parseIndex, readIndexFile, type IndexEntry, type ParsedIndex } from './segment-index.ts';
import {
  drainSegment,
  problemAt,
  readIndexedSegment,
  readUnindexedSegment,
  UNLISTED,
  type Report,
  type Unindexed,
} from './segment-reader.ts';
import type { EventReader, ReadOptions, ReadProblem, StarpoEvent } from './types.ts';

/** Segment files by sequence number, ascending. */
async function segmentFiles(dir: string): Promise<Map<number, string>> {
  const names = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [] as string[];
    throw err;
  });
  const files = names.flatMap((n) => {
    const m = SEGMENT_PATTERN.exec(n);
    return m ? [[Number(m[1]), n] as const] : [];
  });
  return new Map(files.sort((a, b) => a[0] - b[0]).map(([seq, n]) => [seq, join(dir, n)]));
}

export interface ReadPlan {
  /** Segments older than the first indexed one, or every segment when the run has no index. */
  unindexed: string[];
  /** Indexed segments in sequence order with their ranges (the header first). */
  indexed: { seq: number; path: string; ranges: IndexEntry[] }[];
  /** Unindexed segments newer than the first indexed one: created by writers that never indexed them. */
  strays: string[];
  /** Events the index acknowledges. */
  indexedEvents: number;
}

/** Which file is read how (pure). */
export function planRead(dir: string, files: ReadonlyMap<number, string>, entries: readonly IndexEntry[]): ReadPlan {
  const bySeg = new Map<number, IndexEntry[]>();
  for (const e of entries) bySeg.set(e.seg, [...(bySeg.get(e.seg) ?? []), e]);
  const first = Math.min(...bySeg.keys());
  const name = (seq: number) => join(dir, `${String(seq).padStart(8, '0')}.avro`);
  const indexed = [...bySeg.keys()]
    .sort((a, b) => a - b)
    .map((seq) => ({ seq, path: files.get(seq) ?? name(seq), ranges: bySeg.get(seq) as IndexEntry[] }));
  const unlisted = [...files].filter(([seq]) => !bySeg.has(seq));
  return {
    unindexed: unlisted.filter(([seq]) => seq < first).map(([, path]) => path),
    indexed,
    strays: unlisted.filter(([seq]) => seq > first).map(([, path]) => path),
    indexedEvents: entries.reduce((sum, e) => sum + e.n, 0),
  };
}

const NO_INDEX: ParsedIndex = { entries: [], damage: undefined, tornAt: undefined };

/** Reads one run; `handle` decides after each problem (problems.ts). */
class RunRead {
  private readonly tally = { delivered: 0 };
  private legacySeen = false;
  constructor(
    private readonly dir: string,
    private readonly handle: (p: ReadProblem) => AfterProblem,
  ) {}

  /** Notes go to the handler; the note that segments predate the index, once per read. */
  private readonly report: Report = (problem) => {
    if (problem.kind === 'unverified' && this.legacySeen) return;
    this.legacySeen ||= problem.kind === 'unverified';
    this.handle(problem);
  };

  async *events(): AsyncGenerator<StarpoEvent> {
    const files = await segmentFiles(this.dir);
    const bytes = await readIndexFile(this.dir);
    const index: ParsedIndex = bytes === undefined ? NO_INDEX : parseIndex(bytes);
    const plan = planRead(this.dir, files, index.entries);
    const indexPath = join(this.dir, INDEX_FILE);
    if (index.tornAt !== undefined) {
      this.report(problemAt(indexPath, index.tornAt, 'torn-tail', 'the last index line is unfinished'));
    }
    if (index.damage !== undefined) {
      const { line, byteOffset, message } = index.damage;
      // Reading on would pass blocks it can no longer vouch for: the trusted lines are the prefix.
      this.handle(problemAt(indexPath, byteOffset, 'damaged-index', `line ${line}: ${message}`));
      yield* this.read(plan, 'index-damaged');
      return;
    }
    yield* this.read(plan, bytes === undefined ? 'no-index' : 'index-lacks-it');
  }

  private async *read(plan: ReadPlan, unindexed: Unindexed): AsyncGenerator<StarpoEvent> {
    for (const path of plan.unindexed) {
      if (!(yield* this.segment(readUnindexedSegment(path, unindexed, this.report)))) return;
    }
    for (const { path, ranges } of plan.indexed) {
      if (!(yield* this.segment(readIndexedSegment(path, ranges, this.report), plan.indexedEvents))) return;
    }
    if (unindexed === 'index-damaged') return;
    for (const path of plan.strays) {
      this.report(problemAt(path, 0, 'torn-tail', UNLISTED));
    }
  }

  /** Yields the segment's events; false when damage ended the read. */
  private segment(
    blocks: AsyncGenerator<StarpoEvent[], ReadProblem | undefined>,
    indexedEvents?: number,
  ): AsyncGenerator<StarpoEvent, boolean> {
    return drainSegment(blocks, this.handle, this.tally, indexedEvents);
  }
}

class LocalEventReader implements EventReader {
  constructor(private readonly root: string) {}

  read(runId: string, options?: ReadOptions): AsyncGenerator<StarpoEvent> {
    return new RunRead(eventsDir(this.root, runId), problemHandler(options)).events();
  }

  async close(): Promise<void> {}
}

/** Reader over the embedded log's files (same `root` as createLocalEventLog). */
export function createLocalEventReader(options: LocalEventLogOptions = {}): EventReader {
  return new LocalEventReader(options.root ?? 'runs');
}
