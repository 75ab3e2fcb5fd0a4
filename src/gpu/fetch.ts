/**
 * Getting one pinned wheel into the wheel cache: reuse the cached file when its sha256 is the pinned one
 * (a rerun after `npm ci` downloads nothing), else `pip download` exactly that file and check it.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, createReadStream, existsSync, openSync, readFileSync, writeSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { GpuError } from './error.ts';
import { type Wheel, pipDownloadArgs } from './wheels.ts';

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

function logTail(log: string, lines = 3): string {
  try {
    return readFileSync(log, 'utf8').trimEnd().split('\n').slice(-lines).join(' | ');
  } catch {
    return '(no log)';
  }
}

/** Runs `python -m pip download …`, its output appended to the log. */
function pipDownload(python: string, w: Wheel, dest: string, log: string): Promise<void> {
  const args = pipDownloadArgs(w, dest);
  const fd = openSync(log, 'a');
  writeSync(fd, `\n=== starpo gpu install: ${python} ${args.join(' ')}\n`);
  return new Promise((resolve, reject) => {
    const child = spawn(python, args, { stdio: ['ignore', fd, fd] });
    child.once('error', (err: NodeJS.ErrnoException) => {
      closeSync(fd);
      reject(
        new GpuError(
          err.code === 'ENOENT'
            ? `${python} not found: gpu install downloads wheels with pip (install python3 and pip, ` +
                'or set STARPO_PYTHON)'
            : `${python} failed to start: ${err.message}`,
        ),
      );
    });
    child.once('exit', (code) => {
      closeSync(fd);
      if (code === 0) resolve();
      else
        reject(new GpuError(`pip download ${w.name}==${w.version} exited with ${code}: ${logTail(log)} (log ${log})`));
    });
  });
}

export interface FetchedWheel {
  readonly path: string;
  readonly downloaded: boolean;
}

/** The verified wheel file in `dir`, downloaded only when missing or damaged. */
export async function ensureWheel(w: Wheel, dir: string, python: string, log: string): Promise<FetchedWheel> {
  const path = join(dir, w.file);
  if (existsSync(path)) {
    if ((await sha256File(path)) === w.sha256) return { path, downloaded: false };
    await rm(path); // a partial or altered download: fetch it again
  }
  await pipDownload(python, w, dir, log);
  if (!existsSync(path)) {
    throw new GpuError(
      `pip download ${w.name}==${w.version} did not save ${w.file} (another build of that version?); see ${log}`,
    );
  }
  const got = await sha256File(path);
  if (got !== w.sha256) {
    await rm(path);
    throw new GpuError(
      `${w.file} has sha256 ${got}, pinned ${w.sha256}; removed it (src/gpu/wheels.ts pins the files)`,
    );
  }
  return { path, downloaded: true };
}
