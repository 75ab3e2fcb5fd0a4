/** A tiny benchmark of the sandbox: sequential calls per second through one reused child process. */
import { performance } from 'node:perf_hooks';
import type { CodeRunner } from './pool.ts';

export interface SandboxBenchmark {
  calls: number;
  seconds: number;
  callsPerSecond: number;
  /** Mean latency of one call (ms). */
  meanMs: number;
  /** Calls that did not print the expected answer (must be 0). */
  failures: number;
}

/** A BigInt product: the kind of call tool-integrated math makes. */
const CODE = 'console.log(123456789123456789n * 987654321987654321n)';
const EXPECTED = `${123456789123456789n * 987654321987654321n}\n`;

/** Runs one warm-up call (which starts the child), then `calls` calls back to back. */
export async function benchmarkSandbox(runner: CodeRunner, calls = 200): Promise<SandboxBenchmark> {
  await runner.run(CODE);
  let failures = 0;
  const t0 = performance.now();
  for (let i = 0; i < calls; i++) {
    const r = await runner.run(CODE);
    if (!r.ok || r.output !== EXPECTED) failures++;
  }
  const seconds = (performance.now() - t0) / 1000;
  return { calls, seconds, callsPerSecond: calls / seconds, meanMs: (seconds * 1000) / calls, failures };
}
