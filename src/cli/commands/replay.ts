import type { Command } from 'commander';
import { ConfigError, StarpoError } from '../../errors.ts';
import type { EventReader, TrajectoryEvent } from '../../events/types.ts';
import { DEFAULT_TOPIC } from '../../events/kafka-common.ts';
import { DEFAULT_STORE_URI } from '../../durable/protocol.ts';
import type { TrajectorySink } from '../../replay/export.ts';
import {
  iterationFlag,
  localRunEvents,
  readRunConfig,
  requireRun,
  runLocation,
  type RunLocation,
} from '../../run/location.ts';
import { jsonLines, failedIterations, renderNotes, renderTable } from '../../replay/report.ts';
import type { ReplayOutcome } from '../../replay/run.ts';

export interface ReplayFlags {
  source: string;
  runsDir: string;
  fromIteration?: string;
  toIteration?: string;
  export?: string;
  sftDataset?: string;
  select: string;
  split: string;
  json?: boolean;
  brokers?: string;
  topic?: string;
  store?: string;
  allowPartial?: boolean;
}

/**
 * Where the events come from (a registry, not a branch). A missing run is an error, never an empty replay:
 * a local run's directory must exist; on Kafka, where a run is only its events, a run with none is unknown.
 */
const SOURCES: Record<string, (loc: RunLocation, flags: ReplayFlags) => Promise<EventReader>> = {
  files: async (loc) => {
    await requireRun(loc);
    return localRunEvents(loc.root);
  },
  kafka: async (_, flags) => {
    const { createKafkaEventReader } = await import('../../events/kafka-reader.ts');
    return nonEmpty(
      createKafkaEventReader({ brokers: flags.brokers?.split(','), topic: flags.topic }),
      `Kafka topic ${flags.topic ?? DEFAULT_TOPIC}`,
    );
  },
  s3: async (_, flags) => {
    const store = flags.store ?? DEFAULT_STORE_URI;
    const { createSealedRunReader } = await import('../../run/stored-run.ts');
    return nonEmpty(createSealedRunReader(store), `the sealed segments of ${store}`);
  },
};

/** The reader, failing when the run has no event at all. */
function nonEmpty(reader: EventReader, where: string): EventReader {
  return {
    async *read(runId, options) {
      let count = 0;
      for await (const e of reader.read(runId, options)) {
        count++;
        yield e;
      }
      if (count === 0) throw new StarpoError(`run ${runId}: no events in ${where} (check the run id and --source)`);
    },
    close: () => reader.close(),
  };
}

const SPLITS = ['train', 'val', 'all'];

async function openSinks(flags: ReplayFlags): Promise<TrajectorySink[]> {
  if (!SPLITS.includes(flags.split)) throw new ConfigError('--split', `"${flags.split}": one of ${SPLITS.join(', ')}`);
  const sinks: TrajectorySink[] = [];
  if (flags.export) sinks.push(await (await import('../../replay/export.ts')).openTrajectoryExport(flags.export));
  if (flags.sftDataset) {
    const { openSftDataset, parseSelection } = await import('../../replay/sft-dataset.ts');
    sinks.push(await openSftDataset(flags.sftDataset, parseSelection(flags.select)));
  }
  return sinks;
}

function describeSinks(sinks: readonly TrajectorySink[]): Record<string, unknown> {
  const info = (s: TrajectorySink) => ({ written: s.count, ...('skipped' in s ? { skippedDiverged: s.skipped } : {}) });
  return Object.fromEntries(sinks.map((s) => [s.path, info(s)]));
}

function print(
  outcome: ReplayOutcome,
  sinks: readonly TrajectorySink[],
  flags: ReplayFlags,
  say: (line: string) => void,
): void {
  if (flags.json) {
    for (const line of jsonLines(outcome, { files: describeSinks(sinks) })) say(line);
    return;
  }
  say(renderTable(outcome));
  for (const line of renderNotes(outcome)) say(line);
  for (const [path, info] of Object.entries(describeSinks(sinks))) say(`wrote ${path}: ${JSON.stringify(info)}`);
}

/** Runs the replay; returns the exit code (1 when a recomputed metric disagrees with the recorded one). */
export async function replayCommand(
  run: string,
  flags: ReplayFlags,
  say: (line: string) => void = console.log,
): Promise<number> {
  const source = Object.hasOwn(SOURCES, flags.source) ? SOURCES[flags.source] : undefined;
  if (!source) throw new ConfigError('--source', `"${flags.source}": one of ${Object.keys(SOURCES).join(', ')}`);
  const loc = runLocation(run, flags.runsDir);
  const range = {
    fromIteration: iterationFlag('--from-iteration', flags.fromIteration),
    toIteration: iterationFlag('--to-iteration', flags.toIteration),
  };
  const inSplit = (e: TrajectoryEvent) => flags.split === 'all' || e.split === flags.split;
  const reader = await source(loc, flags);
  let sinks: TrajectorySink[] = [];
  try {
    sinks = await openSinks(flags);
    const { replayRun } = await import('../../replay/run.ts');
    const outcome = await replayRun({
      reader,
      runId: loc.runId,
      ...range,
      fallbackConfig: () => readRunConfig(loc),
      allowPartial: flags.allowPartial,
      sinks: sinks.map((s) => ({ write: (e, setup) => (inSplit(e) ? s.write(e, setup) : Promise.resolve()) })),
    });
    for (const s of sinks) await s.close();
    print(outcome, sinks, flags, say);
    return failedIterations(outcome).length > 0 ? 1 : 0;
  } catch (err) {
    for (const s of sinks) await s.abort();
    throw err;
  } finally {
    await reader.close();
  }
}

export function registerReplay(program: Command): void {
  program
    .command('replay')
    .argument('<run>', 'run id (under --runs-dir) or path to the run directory')
    .description(
      "Recompute every iteration's trajectory metrics from the event log and check them against the " +
        'recorded ones; export trajectories; build an SFT dataset',
    )
    .option(
      '--source <source>',
      "files (Avro files under the run), kafka, or s3 (a durable run's sealed copy)",
      'files',
    )
    .option('--runs-dir <dir>', 'where runs live', 'runs')
    .option('--from-iteration <a>', 'first iteration to replay')
    .option('--to-iteration <b>', 'last iteration to replay')
    .option('--export <file>', 'write the trajectories to a .jsonl or .csv file')
    .option('--sft-dataset <file>', 'write selected trajectories as chat records (ExpertRecord JSON lines) for SFT')
    .option('--select <which>', 'trajectories for the SFT dataset: successful, positive-return, all', 'successful')
    .option('--split <split>', 'trajectories exported: train, val or all', 'all')
    .option('--brokers <list>', 'Kafka brokers, comma-separated (default: the local broker)')
    .option('--topic <topic>', 'Kafka topic (default: starpo.events)')
    .option('--store <uri>', "the durable runs' store for --source s3 (default: s3://starpo/runs/)")
    .option(
      '--allow-partial',
      'when the event log is damaged, replay the events before the damage (with a warning) ' + 'instead of failing',
    )
    .option('--json', 'JSON lines instead of a table')
    .action(async (run: string, flags: ReplayFlags) => {
      process.exitCode = await replayCommand(run, flags);
    });
}
