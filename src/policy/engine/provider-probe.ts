/**
 * Probing a provider in a child process. onnxruntime prints why a CUDA provider failed ("libcuda.so.1:
 * cannot open shared object file", "no CUDA-capable device is detected") only to the process's stderr,
 * never into the error JavaScript sees; a child's stderr can be read. It also keeps a failing GPU
 * initialisation out of the caller's process.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ProviderName } from '../../gpu/providers.ts';
import type { ProbeResult } from '../../gpu/status.ts';

const ENTRY = fileURLToPath(new URL('./provider-probe-entry.mjs', import.meta.url));

/** The last JSON line of the child's stdout, or a failure carrying what it printed. */
export function readProbeOutput(stdout: string, stderr: string, failure?: string): ProbeResult {
  const line = stdout
    .trim()
    .split('\n')
    .reverse()
    .find((l) => l.startsWith('{'));
  if (line) {
    const r = JSON.parse(line) as { ok: boolean; message?: string };
    return { ok: r.ok, message: r.message, log: stderr };
  }
  return { ok: false, message: `probe process failed: ${failure ?? 'no output'}`, log: stderr };
}

export function probeInChild(provider: ProviderName, timeoutMs = 60_000): Promise<ProbeResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [ENTRY, provider],
      { timeout: timeoutMs, maxBuffer: 4 << 20, encoding: 'utf8' },
      (err, stdout, stderr) => {
        resolve(readProbeOutput(stdout, stderr, err ? err.message.split('\n')[0] : undefined));
      },
    );
  });
}
