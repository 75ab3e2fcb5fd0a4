/**
 * One writer per run directory. A command that writes a run (train, resume, sft) first creates
 * `<run>/run.lock` exclusively, holding its pid, host and the directory's real path, and removes it when
 * it ends. The file appears whole (written aside, then hard-linked into place, which fails if it exists).
 * A lock is stale, and taken over, when its writer is gone: same host and no such process, or written for
 * another directory (the run was copied while it ran). A live writer, or one on another host that this
 * machine cannot check, is a RunLockedError naming it. (The durable driver needs no file: Temporal runs
 * one workflow per workflow id, so a run has one owner there.)
 */
import { randomUUID } from 'node:crypto';
import { link, readFile, realpath, rename, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { StarpoError } from '../errors.ts';
import { log } from '../log.ts';

export const LOCK_FILE = 'run.lock';

export interface LockHolder {
  pid: number;
  host: string;
  /** The run directory's real path when the lock was taken. */
  dir: string;
  command: string;
  since: string;
}

/** Thrown when another live process holds the run's lock. */
export class RunLockedError extends StarpoError {
  constructor(path: string, holder: LockHolder) {
    const who = `${holder.command} (pid ${holder.pid} on ${holder.host}, since ${holder.since})`;
    super(
      `run ${holder.dir} is in use: ${who} holds ${path}; wait for it to end, or delete that file if no such ` +
        'process runs',
      { details: { path, ...holder } },
    );
  }
}

export interface RunLock {
  readonly path: string;
  /** Removes the lock if it is still this process's; safe to call twice. */
  release(): Promise<void>;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // exists, owned by another user
  }
}

/** Why a held lock can be taken over, or null while its writer may still run. */
export function staleness(holder: LockHolder, dir: string, host = hostname()): string | null {
  if (holder.dir !== dir) return `it was written for ${holder.dir} (the run was copied)`;
  if (holder.host === host && !alive(holder.pid)) return `pid ${holder.pid} no longer runs`;
  return null;
}

async function readLock(path: string): Promise<{ text: string; holder: LockHolder | null } | undefined> {
  const text = await readFile(path, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (text === undefined) return undefined;
  try {
    const holder = JSON.parse(text) as LockHolder;
    return { text, holder: Number.isSafeInteger(holder.pid) && typeof holder.dir === 'string' ? holder : null };
  } catch {
    return { text, holder: null };
  }
}

/** Links a complete lock file into place; false when one exists. */
async function createLock(path: string, text: string): Promise<boolean> {
  const aside = `${path}.${randomUUID()}`;
  await writeFile(aside, text, { flag: 'wx' });
  try {
    await link(aside, path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    await unlink(aside);
  }
}

/** Moves a stale lock out of the way, unless it changed since it was read (then another process took it). */
async function breakLock(path: string, staleText: string): Promise<void> {
  const aside = `${path}.stale-${randomUUID()}`;
  await rename(path, aside).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
  const moved = await readFile(aside, 'utf8').catch(() => undefined);
  if (moved !== undefined && moved !== staleText) await link(aside, path).catch(() => undefined);
  await unlink(aside).catch(() => undefined);
}

/**
 * Takes the lock file `path`, guarding directory `dir` (a real path), for `command`; when a live process holds it,
 * returns that holder instead. A stale lock is taken over.
 */
export async function takeLock(path: string, dir: string, command: string): Promise<RunLock | LockHolder> {
  const holder: LockHolder = { pid: process.pid, host: hostname(), dir, command, since: new Date().toISOString() };
  const text = `${JSON.stringify(holder)}\n`;
  for (let attempt = 0; attempt < 5; attempt++) {
    if (await createLock(path, text)) return { path, release: () => releaseLock(path, text) };
    const held = await readLock(path);
    if (held === undefined) continue;
    const why = held.holder === null ? 'it is not a lock file starpo wrote' : staleness(held.holder, dir);
    if (why === null) return held.holder!;
    log.warn({ path, holder: held.holder }, `taking over a stale lock: ${why}`);
    await breakLock(path, held.text);
  }
  throw new StarpoError(`${dir}: could not take ${path}; other processes keep taking it`);
}

/** Takes the run's lock for `command` (e.g. "starpo train"); the run directory must exist. */
export async function acquireRunLock(runDir: string, command: string): Promise<RunLock> {
  const path = join(runDir, LOCK_FILE);
  const taken = await takeLock(path, await realpath(runDir), command);
  if (!('release' in taken)) throw new RunLockedError(path, taken);
  return taken;
}

async function releaseLock(path: string, text: string): Promise<void> {
  const held = await readLock(path);
  if (held?.text === text) await unlink(path).catch(() => undefined);
}
