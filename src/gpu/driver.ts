/**
 * The NVIDIA driver as this machine shows it: the kernel module's version (/proc/driver/nvidia/version)
 * and the devices nvidia-smi lists. Read synchronously: the engine's provider error path uses it too.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface NvidiaDevice {
  readonly name: string;
  readonly memoryMiB: number;
  readonly driver: string;
}

export interface DriverFacts {
  /** The kernel module's (or nvidia-smi's) driver version; null when neither says. */
  readonly version: string | null;
  /** nvidia-smi's devices; null when nvidia-smi is missing or could not talk to the driver. */
  readonly devices: readonly NvidiaDevice[] | null;
  /** nvidia-smi's own words when it listed nothing (e.g. "No devices were found"). */
  readonly smiMessage?: string;
}

/** "NVRM version: NVIDIA UNIX [Open Kernel Module for x86_64|x86_64 Kernel Module]  580.65.06  …" → "580.65.06". */
export function parseProcVersion(text: string): string | null {
  return /^NVRM version:.*?Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)/m.exec(text)?.[1] ?? null;
}

/** `nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader,nounits` lines. */
export function parseSmi(csv: string): NvidiaDevice[] {
  return csv
    .split('\n')
    .map((l) => l.split(',').map((s) => s.trim()))
    .filter((f) => f.length === 3 && /^\d+$/.test(f[1]))
    .map(([name, mem, driver]) => ({ name, memoryMiB: Number(mem), driver }));
}

export const driverMajor = (version: string): number => Number(version.split('.')[0]);

function readProc(): string | null {
  try {
    return parseProcVersion(readFileSync('/proc/driver/nvidia/version', 'utf8'));
  } catch {
    return null;
  }
}

export function readDriverFacts(smi = 'nvidia-smi'): DriverFacts {
  const proc = readProc();
  const r = spawnSync(smi, ['--query-gpu=name,memory.total,driver_version', '--format=csv,noheader,nounits'], {
    encoding: 'utf8',
    timeout: 15_000,
  });
  if (r.error) return { version: proc, devices: null };
  const devices = parseSmi(r.stdout ?? '');
  const smiMessage = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim().split('\n')[0];
  if (r.status !== 0 && devices.length === 0) {
    // "No devices were found" (exit 6) still means the driver answered; other failures mean it did not.
    return /no devices were found/i.test(smiMessage)
      ? { version: proc, devices: [], smiMessage }
      : { version: proc, devices: null, smiMessage };
  }
  return { version: proc ?? devices[0]?.driver ?? null, devices };
}
