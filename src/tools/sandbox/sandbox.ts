/**
 * The code sandbox: model-written JavaScript runs in a long-lived child process (child.mjs) that is
 * started under Node's permission model and reused across calls, one call at a time. Each call gets a
 * fresh vm context without the built-ins that schedule work for later, so nothing of a call survives it
 * (child.mjs); reset() restarts the process for hard isolation. The child's memory is capped by the OS
 * (RLIMIT_DATA, which counts the JS heap, ArrayBuffers and every other private allocation), not only
 * its JS heap.
 * Every failure — syntax, exceptions, time, output, memory, a crash — comes back as a result with a
 * clear error line, never as a thrown exception, so a rollout keeps going whatever the code does.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../../errors.ts';

export type SandboxErrorKind = 'syntax' | 'runtime' | 'timeout' | 'output' | 'memory' | 'crash';

export interface SandboxResult {
  ok: boolean;
  /** What the code printed through console.log (kept up to the output cap even when it failed). */
  output: string;
  /** One line such as "TypeError: x is not a function"; absent when ok. */
  error?: string;
  errorKind?: SandboxErrorKind;
}

export interface SandboxOptions {
  /** CPU time per call (vm timeout, ms). */
  timeoutMs?: number;
  /**
   * Memory a call may allocate (MB): the JS heap's cap, and the child's whole data segment is capped at
   * this plus RUNTIME_RESERVE_MB (Node itself), so ArrayBuffers count too. A call past it fails with a
   * MemoryError and the child is replaced.
   */
  memoryMb?: number;
  /** Characters of console output per call; more is an error. */
  maxOutputChars?: number;
  /** Extra wall-clock time before the parent kills a child that did not answer (ms). */
  killGraceMs?: number;
  /** Calls after which the child is replaced anyway (bounds any slow leak in the long-lived process). */
  recycleAfter?: number;
}

const DEFAULTS: Required<SandboxOptions> = {
  timeoutMs: 2000,
  memoryMb: 64,
  maxOutputChars: 8192,
  killGraceMs: 1000,
  recycleAfter: 5000,
};
const CHILD_PATH = fileURLToPath(new URL('./child.mjs', import.meta.url));
const START_TIMEOUT_MS = 15000;
/** What Node needs besides the call's memory: ~90 MB of runtime at start, plus the heap's young generation. */
export const RUNTIME_RESERVE_MB = 160;

interface Reply extends SandboxResult {
  id: number;
  ready?: boolean;
}

/** One running child: its process, the reply being awaited, and the tail of its stderr (for OOM reports). */
interface Child {
  proc: ChildProcessWithoutNullStreams;
  ready: Promise<void>;
  waiting: ((reply: Reply | null) => void) | null;
  stdout: string;
  stderrTail: string;
  exited: boolean;
  calls: number;
}

export class Sandbox {
  readonly options: Required<SandboxOptions>;
  private child: Child | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private nextId = 1;
  private starts = 0;

  constructor(options: SandboxOptions = {}) {
    this.options = { ...DEFAULTS, ...options };
    const o = this.options;
    for (const [field, value] of Object.entries(o)) {
      if (!Number.isInteger(value) || value < 1) {
        throw new ConfigError(`sandbox.${field}`, `must be a positive integer, got ${value}`);
      }
    }
  }

  /** Children started so far (1 + restarts after crashes, timeouts, resets and recycling). */
  get processStarts(): number {
    return this.starts;
  }

  /** Runs `code` after the calls already queued; always resolves. */
  run(code: string): Promise<SandboxResult> {
    const result = this.queue.then(() => this.exec(code));
    this.queue = result.catch(() => undefined);
    return result;
  }

  /** Replaces the child process (after the queued calls): nothing of the old process can reach later calls. */
  reset(): Promise<void> {
    const done = this.queue.then(() => this.kill());
    this.queue = done.catch(() => undefined);
    return done;
  }

  /** Stops the child; a later run() starts a new one. */
  close(): Promise<void> {
    return this.reset();
  }

  private async exec(code: string): Promise<SandboxResult> {
    let child: Child;
    try {
      child = await this.ensureChild();
    } catch (err) {
      return { ok: false, output: '', error: `SandboxError: ${(err as Error).message}`, errorKind: 'crash' };
    }
    const { timeoutMs, maxOutputChars, killGraceMs } = this.options;
    const id = this.nextId++;
    child.calls++;
    const reply = await new Promise<Reply | null>((resolve) => {
      const timer = setTimeout(() => resolve(null), timeoutMs + killGraceMs);
      child.waiting = (r) => {
        clearTimeout(timer);
        resolve(r);
      };
      if (child.exited) child.waiting(null);
      else child.proc.stdin.write(`${JSON.stringify({ id, code, timeoutMs, maxOutputChars })}\n`);
    });
    child.waiting = null;
    if (reply === null && !child.exited) {
      await this.kill();
      return { ok: false, output: '', error: `TimeoutError: ran longer than ${timeoutMs} ms`, errorKind: 'timeout' };
    }
    if (reply === null || reply.id !== id) return this.crashed(child);
    // After a timeout or a memory error the process is replaced: nothing of the call can linger.
    const fatal = reply.errorKind === 'timeout' || reply.errorKind === 'memory';
    if (fatal || child.calls >= this.options.recycleAfter) await this.kill();
    return reply.errorKind === 'memory' ? this.memoryError(reply.output) : toResult(reply);
  }

  private memoryError(output = ''): SandboxResult {
    const error = `MemoryError: exceeded the sandbox memory limit of ${this.options.memoryMb} MB`;
    return { ok: false, output: typeof output === 'string' ? output : '', error, errorKind: 'memory' };
  }

  private async crashed(child: Child): Promise<SandboxResult> {
    await this.kill();
    if (/out of memory|allocation failed/i.test(child.stderrTail)) return this.memoryError();
    const error = 'SandboxError: the sandbox process stopped unexpectedly';
    return { ok: false, output: '', error, errorKind: 'crash' };
  }

  private ensureChild(): Promise<Child> {
    if (this.child && !this.child.exited) return this.child.ready.then(() => this.child as Child);
    this.child = this.spawnChild();
    const child = this.child;
    return child.ready.then(() => child);
  }

  private spawnChild(): Child {
    this.starts++;
    // An empty environment: nothing of the parent's (tokens, NODE_OPTIONS) reaches the child.
    const proc = spawn('/bin/sh', sandboxCommand(this.options.memoryMb), { stdio: 'pipe', env: {} });
    let markReady!: () => void;
    let failStart!: (err: Error) => void;
    const ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      failStart = reject;
    });
    ready.catch(() => undefined);
    const child: Child = { proc, ready, waiting: null, stdout: '', stderrTail: '', exited: false, calls: 0 };
    const startTimer = setTimeout(() => {
      failStart(new Error('the sandbox did not start'));
      proc.kill('SIGKILL');
    }, START_TIMEOUT_MS);
    proc.stdout.setEncoding('utf8');
    const onReady = () => {
      clearTimeout(startTimer);
      markReady();
    };
    proc.stdout.on('data', (chunk: string) => this.onStdout(child, chunk, onReady));
    proc.stderr.setEncoding('utf8');
    proc.stderr.on('data', (chunk: string) => {
      child.stderrTail = (child.stderrTail + chunk).slice(-4096);
    });
    proc.stdin.on('error', () => undefined); // writes to a dead child: the exit handler reports it
    proc.on('exit', () => {
      child.exited = true;
      clearTimeout(startTimer);
      failStart(new Error(`the sandbox exited during start-up: ${child.stderrTail.trim().split('\n').pop() ?? ''}`));
      child.waiting?.(null);
    });
    // The child must never keep the parent alive: pending calls hold a timer of their own.
    proc.unref();
    for (const stream of [proc.stdin, proc.stdout, proc.stderr]) {
      (stream as unknown as { unref?: () => void }).unref?.();
    }
    return child;
  }

  private onStdout(child: Child, chunk: string, onReady: () => void): void {
    child.stdout += chunk;
    // Replies are bounded by the output cap; anything far larger means the child is not behaving.
    if (child.stdout.length > 4 * this.options.maxOutputChars + 65536) {
      child.proc.kill('SIGKILL');
      return;
    }
    for (let nl = child.stdout.indexOf('\n'); nl >= 0; nl = child.stdout.indexOf('\n')) {
      const line = child.stdout.slice(0, nl);
      child.stdout = child.stdout.slice(nl + 1);
      let reply: Reply;
      try {
        reply = JSON.parse(line) as Reply;
      } catch {
        child.proc.kill('SIGKILL');
        return;
      }
      if (reply.ready) onReady();
      else child.waiting?.(reply);
    }
  }

  private async kill(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exited) return;
    const gone = new Promise<void>((resolve) => child.proc.once('exit', () => resolve()));
    child.proc.ref(); // keep the parent alive until the exit is seen
    child.proc.kill('SIGKILL');
    await gone;
  }
}

/**
 * The child's Node flags: the permission model with read access to the child script only (so no other
 * file, no child processes, workers, addons or WASI), frozen intrinsics and no string code generation
 * in the host realm (in case anything ever leaked into it), and the heap cap.
 */
export function sandboxNodeFlags(memoryMb: number): string[] {
  return [
    '--experimental-permission',
    `--allow-fs-read=${CHILD_PATH}`,
    '--frozen-intrinsics',
    '--disallow-code-generation-from-strings',
    `--max-old-space-size=${memoryMb}`,
    '--no-warnings',
  ];
}

/**
 * `sh` arguments that cap the data segment (RLIMIT_DATA: heap, ArrayBuffers, malloc, anonymous mmap;
 * measured on Linux with Node 20: a Uint8Array past it throws "Array buffer allocation failed") and
 * then exec node, so the limit holds for the child's whole life and it cannot raise it.
 */
export function sandboxCommand(memoryMb: number): string[] {
  const limitKb = (memoryMb + RUNTIME_RESERVE_MB) * 1024;
  return ['-c', `ulimit -d ${limitKb} && exec "$0" "$@"`, process.execPath, ...sandboxNodeFlags(memoryMb), CHILD_PATH];
}

function toResult(reply: Reply): SandboxResult {
  const output = typeof reply.output === 'string' ? reply.output : '';
  if (reply.ok) return { ok: true, output };
  return { ok: false, output, error: String(reply.error ?? 'Error'), errorKind: reply.errorKind ?? 'runtime' };
}
