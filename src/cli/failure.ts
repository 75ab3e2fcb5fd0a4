/**
 * The CLI's one error surface: every failure becomes a single line `starpo: <what> — <why / what to do>`
 * and an exit code, 2 for usage errors (an unknown command or flag, a missing argument) and 1 for the
 * rest. starpo's own errors (StarpoError) say what and why as "<what>: <why>"; file-system errors name the
 * operation and the path; anything else is a bug, reported as such. STARPO_DEBUG=1 adds the stack.
 */
import { CommanderError } from 'commander';
import { StarpoError } from '../errors.ts';

export interface Failure {
  /** The line, without the "starpo: " prefix. */
  line: string;
  exitCode: 1 | 2;
}

/** Thrown for a command line starpo cannot parse (exit 2). */
export class UsageError extends StarpoError {}

/** What a failed system call was doing, by Node's `syscall`. */
const OPERATIONS: Readonly<Record<string, string>> = {
  open: 'open',
  read: 'read',
  write: 'write',
  mkdir: 'create the directory',
  rename: 'rename',
  unlink: 'remove',
  rmdir: 'remove the directory',
  scandir: 'list the directory',
  stat: 'read',
  lstat: 'read',
  link: 'create',
  copyfile: 'copy',
  fsync: 'write',
  realpath: 'resolve',
  access: 'access',
  mkdtemp: 'create a directory in',
};

/** Why, and what to do, by errno code. */
const REASONS: Readonly<Record<string, string>> = {
  ENOENT: 'it does not exist',
  ENOSPC: 'no space left on the device; free some, then continue the run with `starpo train --resume <run-dir>`',
  EDQUOT: 'the disk quota is exhausted; free some space, then continue the run with `starpo train --resume <run-dir>`',
  EACCES: 'permission denied; choose a directory you can write (e.g. --runs-dir) or fix its permissions',
  EPERM: 'operation not permitted; choose a directory you can write (e.g. --runs-dir) or fix its permissions',
  EROFS: 'the file system is read-only; choose a writable directory (e.g. --runs-dir)',
  EEXIST: 'it already exists',
  ENOTDIR: 'a part of the path is not a directory',
  EISDIR: 'it is a directory',
  EMFILE: 'too many open files; raise the limit (ulimit -n)',
};

type SystemError = NodeJS.ErrnoException & { code: string };

const isSystemError = (e: unknown): e is SystemError =>
  e instanceof Error &&
  typeof (e as NodeJS.ErrnoException).code === 'string' &&
  /^E[A-Z0-9]+$/.test((e as SystemError).code);

/** The first system error in `err`'s cause chain. */
function systemCause(err: unknown): SystemError | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) if (isSystemError(e)) return e;
  return undefined;
}

const oneLine = (text: string): string =>
  text
    .trim()
    .split(/\s*\n\s*/)
    .join('; ');

/** "what: why" → "what — why" (the first colon separates them); a message that has its dash is kept. */
function whatWhy(message: string): string {
  const text = oneLine(message);
  const colon = text.indexOf(': ');
  return text.includes(' — ') || colon < 0 ? text : `${text.slice(0, colon)} — ${text.slice(colon + 2)}`;
}

const reason = (e: SystemError): string => `${REASONS[e.code] ?? e.message} (${e.code})`;

function systemLine(e: SystemError): string {
  const op = OPERATIONS[e.syscall ?? ''] ?? e.syscall ?? 'use';
  const dest = (e as { dest?: string }).dest;
  const where = e.path ? ` ${e.path}${dest ? ` → ${dest}` : ''}` : '';
  return `cannot ${op}${where} — ${reason(e)}`;
}

function usageLine(err: CommanderError | UsageError, command: string): string {
  const text = oneLine(err.message.replace(/^error: /, ''));
  return `${text} — see \`${command} --help\``;
}

/** The line and exit code of a failure; `command` ("starpo train") names where help is. */
export function describeFailure(err: unknown, command = 'starpo'): Failure {
  if (err instanceof CommanderError || err instanceof UsageError) return { line: usageLine(err, command), exitCode: 2 };
  const system = systemCause(err);
  // A StarpoError that only relays a system error (a policy engine's worker's) says no more than the system error.
  if (err instanceof StarpoError && !(system && err.message === system.message)) {
    // A starpo error says what failed; a system error under it, unless already quoted, says why.
    const quoted = system === undefined || err.message.includes(system.code);
    return { line: whatWhy(err.message) + (quoted ? '' : `: ${reason(system)}`), exitCode: 1 };
  }
  if (system) return { line: systemLine(system), exitCode: 1 };
  const message = err instanceof Error ? oneLine(err.message) : String(err);
  return {
    line: `internal error: ${message} — a bug in starpo; rerun with STARPO_DEBUG=1 for the stack and report it`,
    exitCode: 1,
  };
}

/** Prints the failure (with the stack under STARPO_DEBUG=1) and returns its exit code. */
export function reportFailure(
  err: unknown,
  command?: string,
  write: (s: string) => unknown = (s) => process.stderr.write(s),
): 1 | 2 {
  const { line, exitCode } = describeFailure(err, command);
  if (process.env.STARPO_DEBUG === '1') write(`${err instanceof Error ? err.stack : String(err)}\n`);
  write(`starpo: ${line}\n`);
  return exitCode;
}
