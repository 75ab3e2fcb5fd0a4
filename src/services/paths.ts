import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

/** The repository root (where package.json lives); services keep their files under it. */
export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Where downloads/builds are cached (survives `services stop`) and where running services keep
 * pid files, logs and data. Both are git-ignored; STARPO_CACHE_DIR / STARPO_SERVICES_DIR move them.
 */
export const CACHE_DIR = process.env.STARPO_CACHE_DIR ?? join(REPO_ROOT, '.cache');
export const SERVICES_DIR = process.env.STARPO_SERVICES_DIR ?? join(REPO_ROOT, '.services');

export const serviceDir = (name: string): string => join(SERVICES_DIR, name);
/** A service's own temporary directory (TMPDIR, java.io.tmpdir), emptied at each start, so nothing leaks into /tmp. */
export const serviceTmpDir = (name: string): string => join(SERVICES_DIR, name, 'tmp');
export const logFile = (name: string): string => join(SERVICES_DIR, name, `${name}.log`);
export const pidFile = (name: string): string => join(SERVICES_DIR, name, `${name}.pid`);
