/**
 * Where a report reads runs from: the local event log (Avro files under a runs directory, what the
 * embedded driver writes), Kafka (the durable driver) or the sealed copy of a durable run's events in its
 * store (s3). Either way events come through `replay`, so the report sees each event once and only the
 * surviving lineage of a resumed run.
 */
import { existsSync, statSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve, sep } from 'node:path';
import {
  createKafkaEventReader,
  replay,
  type EventReader,
  type ReadOptions,
  type ReplayOptions,
  type StarpoEvent,
} from '../events/index.ts';
import type { KafkaEventReaderOptions } from '../events/kafka-reader.ts';
import { eventsDir } from '../events/local-log.ts';
import { ConfigError } from '../errors.ts';
import { checkRunId, localRunEvents } from '../run/location.ts';
import { DEFAULT_STORE_URI } from '../durable/protocol.ts';
import { sealedRunConfig } from '../run/stored-run.ts';
import { createSealedRunReader } from '../run/stored-run.ts';

export type SourceKind = 'local' | 'kafka' | 's3';

/** A run: its id and, for local logs, the directory that holds `<runId>/`. */
export interface RunRef {
  runId: string;
  root?: string;
}

export interface SourceOptions {
  kind: SourceKind;
  /** Where run ids are looked up (local). Default "runs". */
  runsDir?: string;
  kafka?: KafkaEventReaderOptions;
  /** The durable runs' store (s3): `s3://bucket/prefix/` or `file:///dir`. Default DEFAULT_STORE_URI. */
  storeUri?: string;
  /** Read the intact prefix of a damaged log (with a warning) instead of failing. */
  allowPartial?: boolean;
  /** Where notes, warnings and the damage a partial read stops at go (default: the log, as warnings). */
  onProblem?: ReadOptions['onProblem'];
}

export interface ReportSource {
  readonly refs: readonly RunRef[];
  /** The run's events, replayed (deduplicated, surviving lineage only). */
  events(ref: RunRef): AsyncIterable<StarpoEvent>;
  /** The run's saved config.json, where the source has one (local runs). */
  configJson(ref: RunRef): Promise<string | undefined>;
  /**
   * Something that changes whenever the run's log does (local: segment names, sizes and mtimes), so a
   * dashboard can skip re-reading an unchanged log; undefined when the source cannot tell (Kafka).
   */
  signature(ref: RunRef): Promise<string | undefined>;
  close(): Promise<void>;
}

/**
 * `runs/abc`, `/tmp/x/abc` (a run directory) or `abc` (an id under runsDir). A name with a path
 * separator is a directory even before it exists, so a dashboard can be opened on a run about to start.
 */
export function resolveRunRef(arg: string, kind: SourceKind, runsDir = 'runs'): RunRef {
  if (kind !== 'local') return { runId: arg };
  const trimmed = arg.replace(/[\\/]+$/, '');
  const isDir =
    trimmed.includes('/') || trimmed.includes(sep) || (existsSync(trimmed) && statSync(trimmed).isDirectory());
  if (!isDir) return { runId: checkRunId(trimmed, 'run'), root: resolve(runsDir) };
  return { runId: checkRunId(basename(trimmed), 'run'), root: dirname(resolve(trimmed)) };
}

async function segmentsSignature(ref: RunRef): Promise<string> {
  const dir = eventsDir(ref.root!, ref.runId);
  const names = (await readdir(dir).catch(() => [] as string[])).sort();
  // config.json counts too: a run that has just started has its config before its first event.
  const paths = [join(ref.root!, ref.runId, 'config.json'), ...names.map((n) => join(dir, n))];
  const stats = await Promise.all(
    paths.map(async (path) => {
      const s = await stat(path).catch(() => undefined);
      return s ? `${path}:${s.size}:${s.mtimeMs}` : '-';
    }),
  );
  return stats.join('|');
}

function localSource(refs: RunRef[], read: ReplayOptions): ReportSource {
  const readers = new Map<string, EventReader>();
  const readerFor = (root: string): EventReader => {
    if (!readers.has(root)) readers.set(root, localRunEvents(root));
    return readers.get(root)!;
  };
  return {
    refs,
    events: (ref) => replay(readerFor(ref.root!), ref.runId, read),
    configJson: (ref) => readFile(join(ref.root!, ref.runId, 'config.json'), 'utf8').catch(() => undefined),
    signature: segmentsSignature,
    close: async () => {
      await Promise.all([...readers.values()].map((r) => r.close()));
    },
  };
}

/** A source whose runs are ids only (Kafka, a store's sealed segments), with a config where it keeps one. */
function readerSource(
  refs: RunRef[],
  reader: EventReader,
  read: ReplayOptions,
  configJson: ReportSource['configJson'] = async () => undefined,
): ReportSource {
  return {
    refs,
    events: (ref) => replay(reader, ref.runId, read),
    configJson,
    signature: async () => undefined,
    close: () => reader.close(),
  };
}

export function openSource(runArgs: readonly string[], options: SourceOptions): ReportSource {
  if (runArgs.length === 0) throw new ConfigError('run', 'name at least one run (a run directory or an id)');
  const refs = runArgs.map((arg) => resolveRunRef(arg, options.kind, options.runsDir));
  const ids = refs.map((r) => r.runId);
  if (new Set(ids).size !== ids.length) {
    throw new ConfigError('run', `the same run id appears twice: ${ids.join(', ')}`);
  }
  const read = { allowPartial: options.allowPartial, onProblem: options.onProblem };
  if (options.kind === 'kafka') return readerSource(refs, createKafkaEventReader(options.kafka ?? {}), read);
  if (options.kind === 's3') {
    const store = options.storeUri ?? DEFAULT_STORE_URI;
    return readerSource(refs, createSealedRunReader(store), read, (ref) => sealedRunConfig(store, ref.runId));
  }
  return localSource(refs, read);
}
