/** Where a run lives, as the commands name it: a run id under --runs-dir, or a path to the run directory. */
import { readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { ConfigError } from '../errors.ts';
import { configFromJSON, type RlConfig } from '../rl/config.ts';

export interface RunLocation {
  /** The runs directory (the event log's and checkpoint store's root). */
  root: string;
  runId: string;
}

/** "demo" → <runsDir>/demo; "runs/demo", "/tmp/x/demo/" → that directory. */
export function runLocation(run: string, runsDir = 'runs'): RunLocation {
  const trimmed = run.replace(/[\\/]+$/, '');
  if (!/[\\/]/.test(trimmed)) return { root: runsDir, runId: trimmed };
  return { root: dirname(trimmed), runId: basename(trimmed) };
}

/** The resolved config the run saved beside its events. */
export async function readRunConfig(loc: RunLocation): Promise<RlConfig> {
  const path = join(loc.root, loc.runId, 'config.json');
  const text = await readFile(path, 'utf8').catch((cause: NodeJS.ErrnoException) => {
    throw new ConfigError('run', `cannot read ${path}: ${cause.code ?? cause.message}`, { cause });
  });
  return configFromJSON(text);
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
