/**
 * Gathering the facts status.ts classifies: whether the CUDA provider is in place and links (ldd),
 * what the driver says, and whether the Vulkan loader is there. Synchronous and cheap (no GPU is
 * touched), so the engine's provider error path can say which state the machine is in.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { readDriverFacts } from './driver.ts';
import { ldd, unexpectedMissing } from './ldd.ts';
import { readManifest } from './manifest.ts';
import { CUDA_PROVIDER, type GpuPaths, PROVIDER_LIBS, gpuPaths, ortNodeVersion } from './paths.ts';
import type { CudaFacts, CudaInstall, ProbeResult } from './status.ts';
import { WHEEL_SETS } from './wheels.ts';

/** The provider files next to libonnxruntime.so.1, resolved through their links, and what ldd finds for them. */
export function cudaInstallState(paths: GpuPaths = gpuPaths(), lddCommand = 'ldd'): CudaInstall {
  const present = PROVIDER_LIBS.filter((n) => existsSync(join(paths.native, n))); // existsSync follows links
  if (present.length === 0) return { kind: 'absent' };
  if (present.length < PROVIDER_LIBS.length) {
    return {
      kind: 'broken',
      reason:
        `${PROVIDER_LIBS.filter((n) => !present.includes(n)).join(', ')} missing (or its link is dangling) in ` +
        `${paths.native}`,
    };
  }
  try {
    const r = ldd(join(paths.native, CUDA_PROVIDER), lddCommand);
    const bad = unexpectedMissing(r);
    if (bad.length > 0) return { kind: 'broken', reason: `the loader cannot find ${bad.join(', ')}` };
    return { kind: 'installed', missing: r.missing, forOrt: readManifest(paths.lib)?.ortVersion ?? null };
  } catch (err) {
    return { kind: 'broken', reason: (err as Error).message };
  }
}

export function gatherCudaFacts(probe: ProbeResult | null, paths: GpuPaths = gpuPaths()): CudaFacts {
  const ortVersion = ortNodeVersion();
  const set = WHEEL_SETS[ortVersion] ?? Object.values(WHEEL_SETS)[0];
  const install = cudaInstallState(paths);
  // The driver is only asked once the libraries are in place: before that its answer changes nothing.
  const driver = install.kind === 'installed' ? readDriverFacts() : { version: null, devices: null };
  return { install, ortVersion, cudaMajor: set.cudaMajor, minDriver: set.minDriver, driver, probe };
}

/** `ldconfig -p` lines name each cached library: "\tlibvulkan.so.1 (libc6,x86-64) => /lib/…". */
export function inLoaderCache(ldconfigOutput: string, name: string): boolean {
  return ldconfigOutput.split('\n').some((l) => l.trim().startsWith(`${name} `));
}

/** Whether dlopen(name) would find it: LD_LIBRARY_PATH, then the loader cache. */
export function loaderFinds(name: string): boolean {
  const dirs = (process.env.LD_LIBRARY_PATH ?? '').split(':').filter(Boolean);
  if (dirs.some((d) => existsSync(join(d, name)))) return true;
  for (const cmd of ['ldconfig', '/sbin/ldconfig', '/usr/sbin/ldconfig']) {
    const r = spawnSync(cmd, ['-p'], { encoding: 'utf8', maxBuffer: 8 << 20 });
    if (!r.error) return inLoaderCache(r.stdout ?? '', name);
  }
  return false;
}
