/**
 * The CUDA provider's RUNPATH. onnxruntime-gpu ships it with none (Python preloads the NVIDIA libraries),
 * so starpo sets one. It is the lib directory's absolute path, not $ORIGIN: onnxruntime opens the provider
 * through the link next to libonnxruntime.so.1, and glibc takes $ORIGIN from the path opened (the link's
 * directory, checked with ldd), where the CUDA libraries are not.
 */
import { execFile } from 'node:child_process';
import { isAbsolute } from 'node:path';
import { promisify } from 'node:util';
import { GpuError } from './error.ts';

export type RunpathPlan = { readonly action: 'keep' } | { readonly action: 'set'; readonly value: string };

/** Whether the provider's RUNPATH (as patchelf prints it) must be set to point at `libDir`. */
export function runpathPlan(current: string, libDir: string): RunpathPlan {
  if (!isAbsolute(libDir))
    throw new GpuError(`the lib directory ${libDir} must be absolute (a relative RUNPATH follows the process's cwd)`);
  if (libDir.includes(':'))
    throw new GpuError(
      `the lib directory ${libDir} contains ':', which separates RUNPATH entries; move STARPO_CACHE_DIR`,
    );
  return current.trim() === libDir ? { action: 'keep' } : { action: 'set', value: libDir };
}

const run = promisify(execFile);

async function patchelf(tool: string, args: string[]): Promise<string> {
  try {
    return (await run(tool, args, { maxBuffer: 1 << 20 })).stdout;
  } catch (err) {
    throw new GpuError(`patchelf ${args.join(' ')} failed: ${(err as Error).message.split('\n')[0]}`, { cause: err });
  }
}

/** Points `file`'s RUNPATH at `libDir` unless it already does; returns what was done. */
export async function ensureRunpath(tool: string, file: string, libDir: string): Promise<RunpathPlan['action']> {
  const plan = runpathPlan(await patchelf(tool, ['--print-rpath', file]), libDir);
  if (plan.action === 'set') await patchelf(tool, ['--set-rpath', plan.value, file]);
  return plan.action;
}
