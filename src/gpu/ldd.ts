/**
 * What the dynamic loader would resolve for a library, from `ldd`: the same search (RUNPATH, the loader
 * cache, default directories) onnxruntime's dlopen does, without loading anything.
 */
import { spawnSync } from 'node:child_process';
import { GpuError } from './error.ts';
import { DRIVER_LIB } from './paths.ts';

export interface LddResult {
  /** Library name → the path it resolves to. */
  readonly found: ReadonlyMap<string, string>;
  readonly missing: readonly string[];
}

/**
 * Parses ldd's lines: `name => /path (0x…)`, `name => not found`, and the loader's and vDSO's lines
 * without an arrow (skipped). Output that lists nothing (e.g. "not a dynamic executable") is an error.
 */
export function parseLdd(text: string, file = 'library'): LddResult {
  const found = new Map<string, string>();
  const missing: string[] = [];
  for (const line of text.split('\n')) {
    const m = /^\s*(\S+)\s+=>\s+(not found|(\S+)\s+\(0x[0-9a-f]+\))\s*$/.exec(line);
    if (!m) continue;
    if (m[2] === 'not found') missing.push(m[1]);
    else found.set(m[1], m[3]);
  }
  if (found.size === 0 && missing.length === 0) {
    throw new GpuError(`ldd lists no libraries for ${file}: ${text.trim().split('\n')[0] || '(no output)'}`);
  }
  return { found, missing };
}

/** Missing libraries other than the NVIDIA driver's, which only a driver install provides. */
export function unexpectedMissing(r: LddResult, allowed: readonly string[] = [DRIVER_LIB]): string[] {
  return r.missing.filter((name) => !allowed.includes(name));
}

/** Runs ldd on a file; a library that is not found is part of the result, not an error. */
export function ldd(file: string, command = 'ldd'): LddResult {
  const r = spawnSync(command, [file], { encoding: 'utf8', maxBuffer: 1 << 20 });
  if ((r.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') {
    throw new GpuError(`${command} is not on PATH (needed to check that the CUDA libraries link)`);
  }
  // glibc's ldd exits 1 when a dependency is missing, still printing the list; parseLdd decides.
  return parseLdd(`${r.stdout ?? ''}${r.status === 0 ? '' : (r.stderr ?? '')}`, file);
}
