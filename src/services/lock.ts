/**
 * One `services start` or `services stop` at a time per services directory. Two starts at once both launch a
 * service, the second overwrites the first's pid file, and the first instance runs on untracked: `services stop`
 * no longer finds it (seen: an orphaned Kafka failing its start-up at a full core for half an hour). The second
 * command waits for the first, then finds the services running (or stopped).
 */
import { mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { ServiceError } from '../errors.ts';
import { takeLock, type LockHolder } from '../storage/run-lock.ts';
import { SERVICES_DIR } from './paths.ts';

export const SERVICES_LOCK = 'services.lock';

/** Runs `fn` holding the lock, waiting up to `timeoutMs` for another holder (an install can take minutes). */
export async function withServicesLock<T>(
  command: string,
  say: (line: string) => void,
  fn: () => Promise<T>,
  { dir = SERVICES_DIR, timeoutMs = 20 * 60_000, pollMs = 500 } = {},
): Promise<T> {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, SERVICES_LOCK);
  const deadline = Date.now() + timeoutMs;
  let waitingFor: LockHolder | undefined;
  for (;;) {
    const taken = await takeLock(path, realpathSync(dir), command);
    if ('release' in taken) {
      try {
        return await fn();
      } finally {
        await taken.release();
      }
    }
    if (waitingFor?.pid !== taken.pid) say(`waiting for ${taken.command} (pid ${taken.pid}, since ${taken.since})`);
    waitingFor = taken;
    if (Date.now() >= deadline)
      throw new ServiceError(
        'services',
        `${taken.command} (pid ${taken.pid}) still holds ${path} after ${timeoutMs / 1000}s; ` +
          'wait for it, or delete that file if no such process runs',
      );
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
