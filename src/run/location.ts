/**
 * Where a run lives, as the commands name it: a run id under --runs-dir, or a path to the run directory.
 * The directory is the run: its name is the run id, whatever id its files were written under, so a run
 * copied or renamed is read, evaluated and resumed as the run its directory names.
 */
import { readFile, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { ConfigError, StarpoError } from '../errors.ts';
import { assertSafeId } from '../events/ids.ts';
import { createLocalEventReader } from '../events/local-reader.ts';
import type { EventReader } from '../events/types.ts';
import { configFromJSON, type RlConfig } from '../rl/config.ts';

export interface RunLocation {
  /** The runs directory (the event log's and checkpoint store's root). */
  root: string;
  runId: string;
}

/** Thrown when a command names a run whose directory holds no run (no config.json, or no event log either). */
export class RunNotFoundError extends StarpoError {
  constructor(loc: RunLocation, what: string) {
    super(
      `run ${loc.runId} not found: ${join(loc.root, loc.runId)} holds no ${what} ` +
        '(check the run id, or --runs-dir for a bare id)',
      { details: { ...loc } },
    );
  }
}

const missing = (err: NodeJS.ErrnoException): boolean => err.code === 'ENOENT' || err.code === 'ENOTDIR';

/**
 * A run id names a directory, event keys and S3 keys, so it is checked before any path is built from it:
 * `../x`, `a/b` and the empty id are refused, naming the flag or field (`field`) that gave it.
 */
export function checkRunId(id: string, field: string): string {
  try {
    assertSafeId('runId', id);
  } catch (cause) {
    throw new ConfigError(
      field,
      `${JSON.stringify(id)} is not a valid run id (letters, digits, . _ -; at most 128; ` + 'no path separators)',
      { cause },
    );
  }
  return id;
}

/** "demo" → <runsDir>/demo; "runs/demo", "/tmp/x/demo/" → that directory. The run id is checked. */
export function runLocation(run: string, runsDir = 'runs'): RunLocation {
  const trimmed = run.replace(/[\\/]+$/, '');
  const isPath = /[\\/]/.test(trimmed);
  const loc = isPath ? { root: dirname(trimmed), runId: basename(trimmed) } : { root: runsDir, runId: trimmed };
  checkRunId(loc.runId, 'run');
  return loc;
}

/** Fails with RunNotFoundError unless the run's directory holds its config.json or its event log. */
export async function requireRun(loc: RunLocation): Promise<void> {
  for (const name of ['config.json', 'events']) {
    const found = await stat(join(loc.root, loc.runId, name)).then(
      () => true,
      (err: NodeJS.ErrnoException) => {
        if (missing(err)) return false;
        throw err;
      },
    );
    if (found) return;
  }
  throw new RunNotFoundError(loc, 'config.json or events/');
}

/** The resolved config the run saved beside its events; RunNotFoundError when there is none. */
export async function readRunConfig(loc: RunLocation): Promise<RlConfig> {
  const path = join(loc.root, loc.runId, 'config.json');
  const text = await readFile(path, 'utf8').catch((cause: NodeJS.ErrnoException) => {
    if (missing(cause)) throw new RunNotFoundError(loc, 'config.json');
    throw cause;
  });
  return configFromJSON(text, path);
}

/**
 * The local event log of the runs under `root`, each event named by the directory it was read from
 * (a run's directory holds only its own events), so a copied or renamed run replays, deduplicates and
 * resumes as one run even though its older events carry the id it was written under.
 */
export function localRunEvents(root: string): EventReader {
  const reader = createLocalEventReader({ root });
  return {
    async *read(runId, options) {
      for await (const e of reader.read(runId, options)) yield e.runId === runId ? e : { ...e, runId };
    },
    close: () => reader.close(),
  };
}

/** A non-negative integer flag, or a ConfigError naming it. */
export function iterationFlag(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0 || value.trim() === '') {
    throw new ConfigError(name, `must be an integer ≥ 0, got "${value}"`);
  }
  return n;
}
