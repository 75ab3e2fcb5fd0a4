import { spawn, spawnSync } from 'node:child_process';
import { openSync, closeSync, readFileSync } from 'node:fs';
import { ServiceError } from '../errors.ts';

/** True when `command` is on PATH. */
export function hasCommand(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

/** Runs an install step to completion, appending its output to logPath; throws with the log's tail on failure. */
export function runToLog(
  service: string,
  command: string,
  args: string[],
  logPath: string,
  env: Record<string, string> = {},
): Promise<void> {
  return new Promise((resolve, reject) => {
    const fd = openSync(logPath, 'a');
    const child = spawn(command, args, { stdio: ['ignore', fd, fd], env: { ...process.env, ...env } });
    child.once('error', (err) => {
      closeSync(fd);
      reject(new ServiceError(service, `${command} failed to run: ${err.message}`));
    });
    child.once('exit', (code) => {
      closeSync(fd);
      if (code === 0) resolve();
      else {
        const tail = logTail(logPath, 12);
        reject(
          new ServiceError(service, `\`${command} ${args.join(' ')}\` exited with ${code}; ${logPath} ends:\n${tail}`),
        );
      }
    });
  });
}

/** The last `lines` lines of a log, indented, so a CI transcript shows why an install failed without the file. */
function logTail(path: string, lines: number): string {
  try {
    const text = readFileSync(path, 'utf8').trimEnd();
    return text
      .split('\n')
      .slice(-lines)
      .map((l) => `    ${l}`)
      .join('\n');
  } catch {
    return '    (the log could not be read)';
  }
}
