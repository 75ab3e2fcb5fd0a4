/**
 * Reading onnxruntime's per-session profiles (STARPO_ORT_PROFILE, engine/session.ts) for the profile scripts
 * (profile-step.ts, profile-decode.ts): each session's program runs and kernel events, and kernel time by operator.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

interface ProfileEvent {
  cat: string;
  name: string;
  ts: number;
  dur: number;
  args?: { op_name?: string };
}

export interface SessionProfile {
  /** `model_run` events, oldest first (µs since the session started). */
  runs: ProfileEvent[];
  /** `*_kernel_time` events. */
  kernels: ProfileEvent[];
}

/**
 * Every session profile in `dir` that ran, keeping the later half of its runs and the kernels they ran: the scripts
 * run their work twice and measure the second time (the first compiles programs and warms the arena).
 */
export function laterHalfOfEachSession(dir: string): SessionProfile[] {
  const out: SessionProfile[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
    const events = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as ProfileEvent[];
    const runs = events.filter((e) => e.cat === 'Session' && e.name === 'model_run').sort((a, b) => a.ts - b.ts);
    if (runs.length === 0) continue;
    const from = runs[Math.floor(runs.length / 2)]!.ts;
    out.push({
      runs: runs.filter((e) => e.ts >= from),
      kernels: events.filter((e) => e.cat === 'Node' && e.name.endsWith('_kernel_time') && e.ts >= from),
    });
  }
  return out;
}

/** Kernel milliseconds and node executions by operator type, largest first, and their total. */
export function kernelTimeByOp(kernels: readonly ProfileEvent[]): {
  byOp: [string, { ms: number; nodes: number }][];
  kernelMs: number;
} {
  const byOp = new Map<string, { ms: number; nodes: number }>();
  let kernelMs = 0;
  for (const e of kernels) {
    const op = e.args?.op_name ?? '?';
    const entry = byOp.get(op) ?? { ms: 0, nodes: 0 };
    entry.ms += e.dur / 1000;
    entry.nodes += 1;
    byOp.set(op, entry);
    kernelMs += e.dur / 1000;
  }
  return { byOp: [...byOp].sort((a, b) => b[1].ms - a[1].ms), kernelMs };
}

/**
 * JSON lines of the later half of `dir`'s session profiles (the scripts' measured run): kernel time by operator, the
 * `top` largest, then the kernels' total and what of `wallMs` ran outside them.
 */
export function printKernelTime(dir: string, wallMs: number, top = 20): void {
  const { byOp, kernelMs } = kernelTimeByOp(laterHalfOfEachSession(dir).flatMap((p) => p.kernels));
  const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
  for (const [op, { ms, nodes }] of byOp.slice(0, top))
    console.log(JSON.stringify({ op, ms: round(ms), share: round(ms / kernelMs, 3), nodes }));
  console.log(JSON.stringify({ kernelMs: round(kernelMs), outsideKernelsMs: round(wallMs - kernelMs) }));
}

/** Total milliseconds of program runs. */
export const runMs = (runs: readonly ProfileEvent[]): number => runs.reduce((s, e) => s + e.dur / 1000, 0);
