/**
 * The local services' data: Kafka's log directory holds a durable run's event log, S3Mock's root its checkpoints and
 * the sealed copy of its completed iterations' events, Temporal's SQLite file its workflow histories. A start never
 * deletes any of it; wiping is `starpo services reset <name> --yes`, which names what it deletes. Each service
 * records when its data was first created (`data.json` beside it), so data that vanished or was re-formatted since
 * (a deleted directory, a cleaned disk) is refused at start and shown by `doctor`, never silently replaced by an
 * empty service, naming the durable runs that kept data there (run-ledger.ts).
 */
import { existsSync, readFileSync, rmSync, statSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ServiceError } from '../errors.ts';
import type { ServiceSpec } from './service.ts';
import { serviceDir } from './paths.ts';
import { forgetRuns, runsOn } from './run-ledger.ts';

/** What a service keeps and what losing it means, for the one line a vanished or reset service gets. */
export const DATA_MEANING: Record<ServiceSpec['name'], string> = {
  kafka:
    'the event log of every durable run written to it (the store keeps a sealed copy of completed iterations; ' +
    'iterations under way are only here)',
  s3: 'the checkpoints, configs, artifacts and sealed events of every durable run stored in it',
  temporal: 'the workflow histories of every durable run (their progress and what remains to run)',
};

interface DataRecord {
  createdAt: string;
  /** Kafka: the KRaft cluster id its log directory was formatted with; a different one is a re-format. */
  clusterId?: string;
}

const recordPath = (spec: ServiceSpec): string => join(serviceDir(spec.name), 'data.json');

function readRecord(spec: ServiceSpec): DataRecord | null {
  const path = recordPath(spec);
  if (!existsSync(path)) return null;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as DataRecord;
  } catch {
    return null; // an unreadable record cannot vouch for anything: treated as none, rewritten at the next start
  }
}

export type DataState =
  | { kind: 'none' }
  | { kind: 'kept'; createdAt: string; bytes: number }
  | { kind: 'vanished'; createdAt: string; missing: string; why: 'missing' | 'reformatted' };

function sizeOf(path: string): number {
  if (!existsSync(path)) return 0;
  const st = statSync(path);
  if (!st.isDirectory()) return st.size;
  return readdirSync(path).reduce((n, name) => n + sizeOf(join(path, name)), 0);
}

/** Kafka's cluster id from a formatted log directory's meta.properties, if there is one. */
export function kafkaClusterId(dataDir: string): string | undefined {
  const meta = join(dataDir, 'meta.properties');
  if (!existsSync(meta)) return undefined;
  return /^cluster\.id=(.+)$/m.exec(readFileSync(meta, 'utf8'))?.[1]?.trim();
}

/** Whether the service's data is as first created, absent (never started), or gone since. */
export function dataState(spec: ServiceSpec): DataState {
  const record = readRecord(spec);
  if (record === null) return { kind: 'none' };
  const { createdAt } = record;
  for (const path of spec.dataPaths()) {
    if (!existsSync(path)) return { kind: 'vanished', createdAt, missing: path, why: 'missing' };
  }
  if (spec.name === 'kafka' && record.clusterId !== undefined) {
    const dataDir = spec.dataPaths()[0]!;
    if (kafkaClusterId(dataDir) !== record.clusterId)
      return { kind: 'vanished', createdAt, missing: dataDir, why: 'reformatted' };
  }
  return { kind: 'kept', createdAt, bytes: spec.dataPaths().reduce((n, p) => n + sizeOf(p), 0) };
}

/** One line for data that is gone: what it was, since when, what was lost and how to start over on purpose. */
export function vanishedLine(spec: ServiceSpec, state: Extract<DataState, { kind: 'vanished' }>): string {
  const what = state.why === 'missing' ? 'is gone' : 'was re-formatted';
  return (
    `its data ${state.missing} ${what} (created ${state.createdAt}): ${DATA_MEANING[spec.name]} is lost` +
    `${runsLost(spec)}; \`starpo services reset ${spec.name} --yes\` starts it empty`
  );
}

/** ", among them the runs a, b, c and 4 more": the durable runs submitted here that kept data in the service. */
function runsLost(spec: ServiceSpec): string {
  if (spec.name === 'temporal') return '';
  const runs = runsOn(spec.name);
  if (runs.length === 0) return '';
  const shown = runs.slice(-RUNS_NAMED);
  const more = runs.length - shown.length > 0 ? ` and ${runs.length - shown.length} more` : '';
  return `, among them ${runs.length === 1 ? 'run' : 'the runs'} ${shown.join(', ')}${more}`;
}

/** The most recent runs a vanished service's line names. */
const RUNS_NAMED = 5;

/** Refuses to start a service whose data vanished since it was created (before anything is written). */
export function checkDataBeforeStart(spec: ServiceSpec): void {
  const state = dataState(spec);
  if (state.kind === 'vanished') throw new ServiceError(spec.name, vanishedLine(spec, state), { retryable: false });
}

/** After a start: records the data's creation, once (a kept record keeps its first date). */
export function recordData(spec: ServiceSpec, now = new Date()): void {
  if (readRecord(spec) !== null) return;
  const record: DataRecord = { createdAt: now.toISOString() };
  if (spec.name === 'kafka') record.clusterId = kafkaClusterId(spec.dataPaths()[0]!);
  writeFileSync(recordPath(spec), `${JSON.stringify(record)}\n`);
}

/** What `services reset` deletes: each data path that exists, with its size, then the record. */
export function dataToReset(spec: ServiceSpec): { path: string; bytes: number }[] {
  return spec
    .dataPaths()
    .filter((p) => existsSync(p))
    .map((path) => ({ path, bytes: sizeOf(path) }));
}

export function resetData(spec: ServiceSpec): void {
  for (const path of spec.dataPaths()) {
    // SQLite's journal files beside the database (Temporal) go with it.
    for (const p of [path, `${path}-wal`, `${path}-shm`, `${path}-journal`])
      rmSync(p, { recursive: true, force: true });
  }
  rmSync(recordPath(spec), { force: true });
  if (spec.name !== 'temporal') forgetRuns(spec.name);
}
