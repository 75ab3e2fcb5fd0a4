/**
 * Reads a run's local Avro segments in order. Each file carries its writer's schema, resolved into the
 * current one; a torn tail or corrupt block is reported and the rest of that file skipped, keeping
 * every complete block before it (later segments, written after a restart, are still read).
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import avro from 'avsc';
import { CorruptDataError } from '../errors.ts';
import { fromEnvelope } from './codec.ts';
import { openContainer, readBlocks, type Block, type ContainerHeader } from './avro-container.ts';
import { eventsDir, SEGMENT_PATTERN, type LocalEventLogOptions } from './local-log.ts';
import { problemHandler } from './problems.ts';
import { schemaRegistry } from './schemas.ts';
import type { EventReader, ReadOptions, ReadProblem, StarpoEvent } from './types.ts';

type Report = (problem: ReadProblem) => void;

async function segmentPaths(dir: string): Promise<string[]> {
  const names = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [] as string[];
    throw err;
  });
  return names.filter((n) => SEGMENT_PATTERN.test(n)).sort().map((n) => join(dir, n));
}

function resolverFor(header: ContainerHeader): avro.Resolver | undefined {
  return schemaRegistry().resolverFor(avro.Type.forSchema(JSON.parse(header.schemaJson) as avro.Schema));
}

/** The block's events; stops at the first record that does not decode and reports the block. */
function decodeBlock(block: Block, resolver: avro.Resolver | undefined, file: string, report: Report): StarpoEvent[] {
  const type = schemaRegistry().current.type;
  const events: StarpoEvent[] = [];
  let pos = 0;
  try {
    for (let i = 0; i < block.count; i++) {
      const { value, offset } = type.decode(block.data, pos, resolver);
      if (offset < 0) throw new CorruptDataError(`record ${i} of ${block.count} is truncated`);
      events.push(fromEnvelope(value));
      pos = offset;
    }
  } catch (err) {
    const message = `block records do not decode: ${(err as Error).message}`;
    report({ kind: 'corrupt-block', message, where: `${file}@${block.offset}`, file, byteOffset: block.offset });
  }
  return events;
}

async function* readSegment(path: string, report: Report): AsyncGenerator<StarpoEvent> {
  const problem = (kind: ReadProblem['kind'], byteOffset: number, message: string): void =>
    report({ kind, message, where: `${path}@${byteOffset}`, file: path, byteOffset });
  const opened = await openContainer(path).catch((err: unknown) => {
    if (err instanceof CorruptDataError) return problem('corrupt-block', 0, err.message);
    throw err;
  });
  if (opened === undefined) return;
  const { file, header, size } = opened;
  try {
    if (header === undefined) {
      if (size > 0) problem('torn-tail', 0, 'file ends inside the header');
      return;
    }
    const resolver = resolverFor(header);
    const blocks = readBlocks(file, header, size);
    for (let step = await blocks.next(); ; step = await blocks.next()) {
      if (step.done) {
        if (!step.value.ok) problem(step.value.kind, step.value.byteOffset, step.value.message);
        return;
      }
      yield* decodeBlock(step.value, resolver, path, report);
    }
  } finally {
    await file.close();
  }
}

class LocalEventReader implements EventReader {
  constructor(private readonly root: string) {}

  async *read(runId: string, options?: ReadOptions): AsyncGenerator<StarpoEvent> {
    const report = problemHandler(options);
    for (const path of await segmentPaths(eventsDir(this.root, runId))) yield* readSegment(path, report);
  }

  async close(): Promise<void> {}
}

/** Reader over the embedded log's files (same `root` as createLocalEventLog). */
export function createLocalEventReader(options: LocalEventLogOptions = {}): EventReader {
  return new LocalEventReader(options.root ?? 'runs');
}
