/**
 * Sealed segments: a run's events kept as immutable objects beside its checkpoints (the durable driver's S3
 * store), where a Kafka tiered store or an S3 sink connector would keep them. Each sealed batch is one Avro
 * container segment, as the local log writes them, with an index object in the local log's segments.index line
 * format (segment-index.ts): every range carries its SHA-256, so a sealed copy is as tamper-evident as a local
 * log. Objects cannot be appended to, so a segment is written whole and then its index: an index names a complete
 * segment, and a segment without one is a write a crash cut short (a note; it holds nothing acknowledged).
 * Keys sort in log order, and a segment's bytes are a function of its name and events (the sync marker derives
 * from the name), so sealing again after a crash writes the same objects:
 *   <run>/events/<order, 20 digits>-<lineage>-<iteration, 8 digits>.avro   and   ….index
 */
import { createHash } from 'node:crypto';
import { StarpoError } from '../errors.ts';
import { encodeBlock, encodeHeader } from './avro-container.ts';
import { encodeEvent } from './codec.ts';
import { assertIteration, assertSafeId } from './ids.ts';
import { problemHandler } from './problems.ts';
import { entryFor, formatEntry, parseIndex } from './segment-index.ts';
import { bufferSegment, drainSegment, problemAt, readIndexedSegment, type SegmentBytes } from './segment-reader.ts';
import { schemaRegistry } from './schemas.ts';
import type { EventReader, ReadOptions, ReadProblem, StarpoEvent } from './types.ts';

/** What sealing needs of an object store (the durable driver's ArtifactStore has it). */
export interface SealedStore {
  put(key: string, bytes: Uint8Array): Promise<void>;
  get(key: string): Promise<Buffer>;
  has(key: string): Promise<boolean>;
  /** The keys directly in a folder, sorted. */
  keys(folder: string): Promise<string[]>;
}

/** Raw bytes of records per block: a block is decoded whole, so sealed blocks stay far under the format's cap. */
const BLOCK_BYTES = 8 * 1024 * 1024;
const SEGMENT_NAME = /^\d{20}-[^/]+-\d{8}$/;

export const sealedFolder = (runId: string): string => {
  assertSafeId('runId', runId);
  return `${runId}/events/`;
};

/** The segment's name: `order` (a log position) first, so that names sort in log order. */
export function sealedName(order: bigint, lineageId: string, iteration: number): string {
  assertSafeId('lineageId', lineageId);
  assertIteration(iteration);
  if (order < 0n || order >= 10n ** 20n) throw new StarpoError(`sealed segment order ${order} is out of range`);
  return `${String(order).padStart(20, '0')}-${lineageId}-${String(iteration).padStart(8, '0')}`;
}

const segmentKey = (runId: string, name: string): string => `${sealedFolder(runId)}${name}.avro`;
const indexKey = (runId: string, name: string): string => `${sealedFolder(runId)}${name}.index`;

/** Whether the segment is sealed (its index written). */
export function isSealed(store: SealedStore, runId: string, name: string): Promise<boolean> {
  return store.has(indexKey(runId, name));
}

/** The segment's bytes and its index text for the events, in order (pure: the same input, the same bytes). */
export function encodeSealedSegment(runId: string, name: string, events: readonly StarpoEvent[]) {
  const sync = createHash('sha256').update(`${runId}/${name}`).digest().subarray(0, 16);
  const header = encodeHeader(JSON.stringify(schemaRegistry().current.json), sync, 1);
  const parts = [header];
  const entries = [entryFor(1, 0, header, 0)];
  let at = header.length;
  let records: Buffer[] = [];
  let bytes = 0;
  const flush = () => {
    const block = encodeBlock(records, sync);
    parts.push(block);
    entries.push(entryFor(1, at, block, records.length));
    at += block.length;
    [records, bytes] = [[], 0];
  };
  for (const event of events) {
    if (event.runId !== runId) throw new StarpoError(`sealing run ${runId}: an event of run ${event.runId}`);
    const record = encodeEvent(event);
    if (bytes > 0 && bytes + record.length > BLOCK_BYTES) flush();
    records.push(record);
    bytes += record.length;
  }
  if (records.length > 0) flush();
  return { segment: Buffer.concat(parts), index: entries.map(formatEntry).join('') };
}

/** Seals the events as the named segment, unless it is sealed already; the index is written last. */
export async function sealSegment(
  store: SealedStore,
  runId: string,
  name: string,
  events: readonly StarpoEvent[],
): Promise<'sealed' | 'present'> {
  if (await isSealed(store, runId, name)) return 'present';
  const { segment, index } = encodeSealedSegment(runId, name, events);
  await store.put(segmentKey(runId, name), segment);
  await store.put(indexKey(runId, name), Buffer.from(index));
  return 'sealed';
}

/** Reads a run's sealed segments in log order; problems as the local reader reports them (problems.ts). */
class SealedEventReader implements EventReader {
  constructor(
    private readonly store: SealedStore,
    private readonly where: string,
  ) {}

  async *read(runId: string, options?: ReadOptions): AsyncGenerator<StarpoEvent> {
    const handle = problemHandler(options);
    const folder = sealedFolder(runId);
    const keys = await this.store.keys(folder);
    const names = (suffix: string) =>
      keys.flatMap((k) => (k.endsWith(suffix) ? [k.slice(folder.length, -suffix.length)] : []));
    const indexed = new Set(names('.index').filter((n) => SEGMENT_NAME.test(n))); // others are not of this layout
    for (const name of names('.avro').filter((n) => !indexed.has(n))) {
      const where = this.where + segmentKey(runId, name);
      handle(problemAt(where, 0, 'torn-tail', 'a sealed segment without its index (never sealed)'));
    }
    const tally = { delivered: 0 };
    for (const name of [...indexed].sort()) {
      const parsed = parseIndex(await this.store.get(indexKey(runId, name)));
      if (parsed.damage !== undefined || parsed.tornAt !== undefined || parsed.entries.length === 0) {
        // An index object is written whole: any flaw in it is damage, and what it vouches for cannot be read.
        const what = parsed.damage ? `line ${parsed.damage.line}: ${parsed.damage.message}` : 'the index is incomplete';
        const at = parsed.damage?.byteOffset ?? parsed.tornAt ?? 0;
        handle(problemAt(this.where + indexKey(runId, name), at, 'damaged-index', what));
        return;
      }
      const key = segmentKey(runId, name);
      const blocks = readIndexedSegment(this.where + key, parsed.entries, handle, (where) => this.open(key, where));
      if (!(yield* drainSegment(blocks, handle, tally))) return;
    }
  }

  /** The segment's bytes, read once; only a failed read asks whether the object is gone. */
  private async open(key: string, where: string): Promise<SegmentBytes | ReadProblem> {
    try {
      return bufferSegment(await this.store.get(key));
    } catch (err) {
      if (await this.store.has(key)) throw err;
      return problemAt(where, 0, 'missing-segment', 'the index lists it; the object is gone');
    }
  }

  async close(): Promise<void> {}
}

/** Reader over the sealed segments in `store`; `where` (the store's URI) names objects in problems. */
export function createSealedEventReader(store: SealedStore, where = ''): EventReader {
  return new SealedEventReader(store, where);
}
