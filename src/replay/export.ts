/**
 * Trajectory exports, the format chosen by the file's extension (a registry, not a branch):
 *   .jsonl  one trajectory event per line, as logged (timestamps ISO-8601), plus its event key;
 *   .csv    one summary row per trajectory (RFC 4180 quoting); per-turn actions and responses as JSON arrays.
 */
import { extname } from 'node:path';
import { ConfigError } from '../errors.ts';
import { eventKey, type TrajectoryEvent } from '../events/index.ts';
import { LineWriter } from './line-writer.ts';
import type { EpisodeSetup } from './reenact.ts';

/** A file fed trajectory by trajectory (replay's ReplaySink), written into place on close. */
export interface TrajectorySink {
  /** `setup`: the run's episode settings, for sinks that replay the episode. */
  write(e: TrajectoryEvent, setup: EpisodeSetup): Promise<void>;
  close(): Promise<void>;
  abort(): Promise<void>;
  readonly path: string;
  /** Trajectories written so far. */
  readonly count: number;
}

export const CSV_COLUMNS = [
  'run_id',
  'lineage_id',
  'iteration',
  'split',
  'group',
  'rollout_index',
  'env',
  'env_seed',
  'policy_version',
  'success',
  'return',
  'turns',
  'response_tokens',
  'valid_actions',
  'effective_actions',
  'format_penalty_turns',
  'truncated',
  'actions',
  'responses',
] as const;

/** RFC 4180: quote a field holding a comma, quote, CR or LF, doubling the quotes inside. */
export function csvField(value: string | number | boolean): string {
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function csvRow(e: TrajectoryEvent): string {
  const total = (f: (t: TrajectoryEvent['turns'][number]) => number) => e.turns.reduce((n, t) => n + f(t), 0);
  const row: (string | number | boolean)[] = [
    e.runId,
    e.lineageId,
    e.iteration,
    e.split,
    e.group,
    e.rolloutIndex,
    e.envName,
    e.envSeed,
    e.policyVersion,
    e.success,
    e.trajectoryReturn,
    e.turns.length,
    total((t) => t.responseTokens),
    total((t) => t.actionsValid),
    total((t) => t.actionsEffective),
    total((t) => (t.formatPenalty !== 0 ? 1 : 0)),
    e.extras.truncated === 'true',
    JSON.stringify(e.turns.map((t) => t.executedActions)),
    JSON.stringify(e.turns.map((t) => t.response)),
  ];
  return row.map(csvField).join(',');
}

type Format = { header: string | null; line: (e: TrajectoryEvent) => string };

const FORMATS: Record<string, Format> = {
  '.jsonl': { header: null, line: (e) => JSON.stringify({ key: eventKey(e), ...e }) },
  '.csv': { header: CSV_COLUMNS.join(','), line: csvRow },
};

export async function openTrajectoryExport(path: string): Promise<TrajectorySink> {
  const format = FORMATS[extname(path).toLowerCase()];
  if (!format) throw new ConfigError('--export', `${path}: use a .jsonl or .csv file name`);
  const out = await LineWriter.open(path);
  if (format.header !== null) await out.write(format.header);
  let count = 0;
  return {
    path,
    get count() {
      return count;
    },
    write: async (e) => {
      count++;
      await out.write(format.line(e));
    },
    close: () => out.close(),
    abort: () => out.abort(),
  };
}
