/**
 * What each execution provider can do on this machine, in one sentence, from facts gathered elsewhere
 * (facts.ts): pure functions, so every state is tested without the machine that shows it.
 */
import type { ProviderName } from './providers.ts';
import type { DriverFacts } from './driver.ts';
import { driverMajor } from './driver.ts';
import { DRIVER_LIB } from './paths.ts';

export type ProviderState =
  'working' | 'failed' | 'not-installed' | 'no-driver' | 'driver-too-old' | 'no-device' | 'no-vulkan' | 'no-adapter';

export interface ProviderStatus {
  readonly provider: ProviderName;
  readonly state: ProviderState;
  readonly detail: string;
}

/** A one-node session's outcome, with onnxruntime's own log (the CUDA reason only appears there). */
export interface ProbeResult {
  readonly ok: boolean;
  readonly message?: string;
  readonly log?: string;
}

export type CudaInstall =
  | { readonly kind: 'absent' }
  | { readonly kind: 'broken'; readonly reason: string }
  /** `missing`: what ldd could not resolve (libcuda.so.1 at most); `forOrt`: the version the install was made for. */
  | { readonly kind: 'installed'; readonly missing: readonly string[]; readonly forOrt: string | null };

export interface CudaFacts {
  readonly install: CudaInstall;
  readonly ortVersion: string;
  readonly cudaMajor: number;
  readonly minDriver: number;
  readonly driver: DriverFacts;
  /** null: not run (nothing to learn from it, or the caller's own session already failed). */
  readonly probe: ProbeResult | null;
}

const INSTALL = '(run `starpo gpu install`)';
const said = (p: ProbeResult | null, re: RegExp): boolean =>
  p !== null && re.test(`${p.message ?? ''}\n${p.log ?? ''}`);
const firstLine = (s = ''): string => s.trim().split('\n')[0].slice(0, 240);

/** The state when the facts already rule a working session out (no probe needed), else null. */
export function cudaBlocked(f: CudaFacts): ProviderStatus | null {
  const s = (state: ProviderState, detail: string): ProviderStatus => ({ provider: 'cuda', state, detail });
  const i = f.install;
  if (i.kind === 'absent') return s('not-installed', `not installed ${INSTALL}`);
  if (i.kind === 'broken') return s('not-installed', `not installed: ${i.reason} ${INSTALL}`);
  if (i.forOrt !== null && i.forOrt !== f.ortVersion)
    return s('not-installed', `installed for onnxruntime-node ${i.forOrt}, this is ${f.ortVersion} ${INSTALL}`);
  if (i.missing.includes(DRIVER_LIB)) return s('no-driver', `installed, no NVIDIA driver (${DRIVER_LIB} not found)`);
  const v = f.driver.version;
  if ((v !== null && driverMajor(v) < f.minDriver) || said(f.probe, /driver version is insufficient/i)) {
    return s(
      'driver-too-old',
      `installed, driver too old: ${v ?? 'version unknown'} found, the CUDA ${f.cudaMajor} provider needs ≥ ` +
        `${f.minDriver}`,
    );
  }
  if (f.driver.devices?.length === 0 || said(f.probe, /no CUDA-capable device/i)) {
    return s(
      'no-device',
      `installed, driver ${v ?? '(version unknown)'}, no CUDA device ` +
        `(${f.driver.smiMessage ?? 'no CUDA-capable device is detected'})`,
    );
  }
  return null;
}

export function classifyCuda(f: CudaFacts): ProviderStatus {
  const blocked = cudaBlocked(f);
  if (blocked) return blocked;
  const driver = `driver ${f.driver.version ?? '(version unknown)'}`;
  if (f.probe === null)
    return {
      provider: 'cuda',
      state: 'failed',
      detail: `installed, ${driver}; the session failed (see onnxruntime's log)`,
    };
  if (!f.probe.ok)
    return {
      provider: 'cuda',
      state: 'failed',
      detail: `installed, ${driver}, session failed: ${firstLine(f.probe.message)}`,
    };
  const d = f.driver.devices?.[0];
  return {
    provider: 'cuda',
    state: 'working',
    detail: d
      ? `working: ${d.name}, ${d.memoryMiB} MiB, ${driver}`
      : `working (${driver}; no nvidia-smi to name the device)`,
  };
}

export interface WebgpuFacts {
  /** libvulkan.so.1 (the Vulkan loader Dawn opens) is where the loader finds it. */
  readonly vulkanLoader: boolean;
  readonly probe: ProbeResult;
}

export function classifyWebgpu(f: WebgpuFacts): ProviderStatus {
  const s = (state: ProviderState, detail: string): ProviderStatus => ({ provider: 'webgpu', state, detail });
  if (f.probe.ok) return s('working', 'working (Dawn on Vulkan)');
  if (!f.vulkanLoader)
    return s(
      'no-vulkan',
      "no Vulkan loader (libvulkan.so.1 not found): install libvulkan1 and the GPU vendor's Vulkan driver",
    );
  if (said(f.probe, /No supported adapters|Failed to get a WebGPU adapter/i)) {
    return s('no-adapter', 'Vulkan loader found, no WebGPU adapter (no GPU, or no vendor Vulkan driver)');
  }
  return s('failed', `session failed: ${firstLine(f.probe.message)}`);
}

export function classifyCpu(probe: ProbeResult, threads: number): ProviderStatus {
  return probe.ok
    ? { provider: 'cpu', state: 'working', detail: `working (${threads} threads)` }
    : { provider: 'cpu', state: 'failed', detail: `session failed: ${firstLine(probe.message)}` };
}
