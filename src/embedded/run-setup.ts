/**
 * Starting an embedded run, in two steps. `prepareRun` is the one validation pass: run id, run directory
 * state, provider, model, memory and the `--init-from` source are checked, and nothing is written, so a
 * bad input fails before the run exists (`starpo train --dry-run` stops there). `openRun` then takes the
 * run's lock and, for a new run, writes its config.json: the first writes.
 */
import { mkdir, readdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { canonicalConfigJSON, configDifferences, type RlConfig } from '../rl/config.ts';
import { checkCapacity } from '../rl/capacity.ts';
import { checkEmbeddedProvider } from '../run/models.ts';
import { type RunModel, resolveRunModel } from '../rl/run-model.ts';
import { ConfigError } from '../errors.ts';
import { eventsDir, SEGMENT_PATTERN } from '../events/local-log.ts';
import { chooseCheckpoint, parseCheckpointRef } from '../run/checkpoint-ref.ts';
import { checkRunId, readRunConfig, type RunLocation } from '../run/location.ts';
import { createLocalCheckpointStore, type CheckpointId } from '../storage/index.ts';
import { acquireRunLock, type RunLock } from '../storage/run-lock.ts';
import { writeBytesAtomic } from '../storage/atomic-file.ts';

export interface RunStart extends RunLocation {
  /** New run: the resolved config. Resume: omitted (read from the run directory). */
  config?: RlConfig;
  resume?: boolean;
  fork?: { fromIteration: number };
  /** Fork: from an iteration a damaged log still records (src/run/intact-history.ts). */
  allowPartial?: boolean;
  /** New run only: "<run-dir>[@iteration]" whose actor checkpoint starts this run's actor. */
  initFrom?: string;
  /** New run only: start over under an id whose run has no checkpoint (it stopped during its warm-start). */
  restart?: boolean;
}

/** A checkpoint in another run directory (`--init-from`). */
export interface CheckpointSource {
  root: string;
  id: CheckpointId;
}

export interface PreparedRun {
  c: RlConfig;
  run: RunModel;
  initFrom: CheckpointSource | null;
}

const resuming = (o: RunStart): boolean => Boolean(o.resume || o.fork);

/** The one validation pass before a run writes anything (see the module comment). */
export async function prepareRun(o: RunStart): Promise<PreparedRun> {
  checkRunId(o.runId, 'runId');
  if (!resuming(o) && !o.config) throw new ConfigError('config', 'a new run needs a config');
  const c = resuming(o) ? await readRunConfig(o) : o.config!;
  if (resuming(o)) await checkResumable(o);
  else await checkFresh(o, Boolean(o.restart));
  await checkEmbeddedProvider(c); // a provider this machine lacks fails before the run directory exists
  const run = await resolveRunModel(c); // so does a bad model directory
  checkCapacity(c, run.modelConfig, run.lora);
  const initFrom = o.initFrom && !resuming(o) ? await initSource(o.initFrom, c) : null;
  return { c, run, initFrom };
}

const checkpointsOf = async (o: RunLocation) => createLocalCheckpointStore({ root: o.root }).list(o.runId);
const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

async function checkResumable(o: RunLocation): Promise<void> {
  if ((await checkpointsOf(o)).length > 0) return;
  throw new ConfigError(
    'resume',
    `run ${o.runId} has no checkpoint: it stopped before its warm-start finished; ` +
      `start it over with the options it was started with and --restart (starpo train --restart --run-id ${o.runId} …)`,
  );
}

const alreadyExists = (o: RunLocation) =>
  new ConfigError('runId', `run ${o.runId} already exists in ${o.root}; continue it with --resume`);

/** A new run's id must be free; with `restart`, it may hold a run that never wrote a checkpoint or an event. */
async function checkFresh(o: RunLocation, restart: boolean): Promise<void> {
  if (!(await exists(join(o.root, o.runId, 'config.json')))) return;
  if (!restart) throw alreadyExists(o);
  const checkpoints = await checkpointsOf(o);
  if (checkpoints.length > 0) {
    const newest = checkpoints.at(-1)!;
    throw new ConfigError(
      '--restart',
      `run ${o.runId} has checkpoints (${newest.lineageId}@${newest.iteration}); ` +
        'continue it with --resume instead',
    );
  }
  const segments = (await readdir(eventsDir(o.root, o.runId)).catch(() => [])).filter((n) => SEGMENT_PATTERN.test(n));
  if (segments.length > 0) {
    const why = `run ${o.runId} has events but no checkpoint; move its directory aside to start over`;
    throw new ConfigError('--restart', why);
  }
}

/** The model settings two runs must share for one's weights to start the other. */
const MODEL_FIELDS = [
  'model',
  'modelLayers',
  'modelHidden',
  'modelHeads',
  'modelKvHeads',
  'modelFfn',
  'modelContext',
  'template',
  'chatThinking',
  'loraRank',
  'loraAlpha',
  'loraTargets',
] as const;

/** The checkpoint `--init-from` names, once its model settings are known to match this run's. */
async function initSource(ref: string, c: RlConfig): Promise<CheckpointSource> {
  const loc = parseCheckpointRef(ref);
  const source = await readRunConfig(loc);
  const what = configDifferences(source, c, MODEL_FIELDS);
  if (what) throw new ConfigError('--init-from', `${ref}: the model differs (${what})`);
  return { root: loc.root, id: await chooseCheckpoint(loc, await checkpointsOf(loc), loc.iteration) };
}

/**
 * The first writes of a prepared run: its directory (new runs), its lock, and a new run's config.json
 * (exclusive; with `restart`, replacing the one a run without checkpoints left). Release the lock when done.
 */
export async function openRun(o: RunStart, c: RlConfig, command: string): Promise<RunLock> {
  const dir = join(o.root, o.runId);
  if (!resuming(o)) await makeDirectory(dir);
  const lock = await acquireRunLock(dir, command);
  try {
    if (!resuming(o)) await writeConfig(o, dir, c);
    return lock;
  } catch (err) {
    await lock.release();
    throw err;
  }
}

/** `mkdir -p` that reports the real cause: Node's recursive mkdir says ENOENT where the file system is read-only. */
async function makeDirectory(dir: string): Promise<void> {
  const make = () =>
    mkdir(dir).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
  await make().catch(async (err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT' || dirname(dir) === dir) throw err;
    await makeDirectory(dirname(dir));
    await make();
  });
}

async function writeConfig(o: RunStart, dir: string, c: RlConfig): Promise<void> {
  const path = join(dir, 'config.json');
  const text = `${canonicalConfigJSON(c)}\n`;
  if (o.restart) {
    await checkFresh(o, true); // again, now that the lock is held
    await writeBytesAtomic(path, text);
    return;
  }
  // Whole or absent: a run killed as it starts must not leave an empty config.json that --resume cannot read.
  await writeBytesAtomic(path, text, { exclusive: true }).catch((err: NodeJS.ErrnoException) => {
    throw err.code === 'EEXIST' ? alreadyExists(o) : err;
  });
}
