import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import type { ServiceSpec } from './service.ts';
import { checkDataBeforeStart, recordData } from './data.ts';
import { logFile, pidFile, serviceDir, serviceTmpDir } from './paths.ts';
import { portIsFree, waitFor } from './ports.ts';
import { hasCommand } from './exec.ts';
import { temporalService } from './temporal.ts';
import { kafkaService } from './kafka.ts';
import { s3Service } from './s3.ts';
import { ServiceError } from '../errors.ts';

export const SERVICES: readonly ServiceSpec[] = [temporalService, kafkaService, s3Service];

export function serviceByName(name: string): ServiceSpec {
  const spec = SERVICES.find((s) => s.name === name);
  if (!spec) throw new ServiceError(name, `unknown service; known: ${SERVICES.map((s) => s.name).join(', ')}`);
  return spec;
}

/** The pid of our running instance, or null; a pid whose command line lacks the marker is not ours. */
export function ourPid(spec: ServiceSpec): number | null {
  const path = pidFile(spec.name);
  if (!existsSync(path)) return null;
  const pid = Number(readFileSync(path, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0) return null;
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return cmdline.includes(spec.processMarker) ? pid : null;
  } catch {
    return null;
  }
}

export async function probe(spec: ServiceSpec): Promise<boolean> {
  return spec.isReady().catch(() => false);
}

function logTail(spec: ServiceSpec, lines = 15): string {
  try {
    return readFileSync(logFile(spec.name), 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

async function checkStartable(spec: ServiceSpec): Promise<void> {
  const needed = spec.isInstalled() ? spec.prerequisites.filter((c) => c === 'java') : spec.prerequisites;
  const missing = needed.filter((c) => !hasCommand(c));
  if (missing.length > 0) {
    throw new ServiceError(
      spec.name,
      `missing prerequisite ${missing.join(', ')} on PATH (needed to install or run it)`,
      { retryable: false },
    );
  }
  for (const port of spec.ports()) {
    if (!(await portIsFree(port))) {
      throw new ServiceError(
        spec.name,
        `port ${port} on 127.0.0.1 is already in use by another process; ` +
          `stop that process or choose another port (see src/endpoints.ts)`,
        { retryable: false, details: { port } },
      );
    }
  }
}

function launch(spec: ServiceSpec, command: string, args: string[], env: Record<string, string> = {}): number {
  mkdirSync(serviceDir(spec.name), { recursive: true });
  const tmp = serviceTmpDir(spec.name);
  rmSync(tmp, { recursive: true, force: true }); // a stopped service's leftovers
  mkdirSync(tmp);
  const fd = openSync(logFile(spec.name), 'a');
  writeSync(fd, `\n=== starpo: starting ${spec.name} at ${new Date().toISOString()}: ${command} ${args.join(' ')}\n`);
  const child = spawn(command, args, {
    detached: true,
    stdio: ['ignore', fd, fd],
    env: { ...process.env, TMPDIR: tmp, ...env },
  });
  closeSync(fd);
  if (child.pid === undefined) throw new ServiceError(spec.name, `could not spawn ${command}`);
  child.unref();
  writeFileSync(pidFile(spec.name), `${child.pid}\n`);
  return child.pid;
}

export type StartOutcome = 'started' | 'already running';

/** Starts one service unless ours is already running; resolves once it answers real requests. */
export async function startService(spec: ServiceSpec, say: (line: string) => void): Promise<StartOutcome> {
  const running = ourPid(spec);
  if (running !== null) {
    if (await waitFor(() => probe(spec), spec.readyTimeoutMs)) return 'already running';
    throw new ServiceError(
      spec.name,
      `pid ${running} is running but not ready after ${spec.readyTimeoutMs / 1000}s; ` + `log tail:\n${logTail(spec)}`,
    );
  }
  await checkStartable(spec);
  checkDataBeforeStart(spec); // data that vanished since it was created is never silently replaced
  if (!spec.isInstalled()) await spec.install(say);
  const { command, args, env } = await spec.prepare();
  const pid = launch(spec, command, args, env);
  const ready = await waitFor(async () => {
    if (ourPid(spec) !== pid) throw new ServiceError(spec.name, 'exited');
    return probe(spec);
  }, spec.readyTimeoutMs);
  if (!ready) {
    await stopService(spec);
    throw new ServiceError(
      spec.name,
      `did not become ready within ${spec.readyTimeoutMs / 1000}s ` + `(log ${logFile(spec.name)}):\n${logTail(spec)}`,
    );
  }
  recordData(spec);
  return 'started';
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Stops our instance (by pid file): SIGTERM to its process group, SIGKILL after a grace period. */
export async function stopService(spec: ServiceSpec, graceMs = 20_000): Promise<'stopped' | 'not running'> {
  const pid = ourPid(spec);
  rmSync(pidFile(spec.name), { force: true });
  if (pid === null) return 'not running';
  const signal = (sig: NodeJS.Signals): void => {
    try {
      process.kill(-pid, sig);
    } catch {
      try {
        process.kill(pid, sig);
      } catch {
        /* already gone */
      }
    }
  };
  signal('SIGTERM');
  if (!(await waitFor(async () => !alive(pid), graceMs, 100))) {
    signal('SIGKILL');
    await waitFor(async () => !alive(pid), 5000, 100);
  }
  return 'stopped';
}

export interface ServiceStatus {
  name: string;
  description: string;
  pid: number | null;
  ready: boolean;
  ports: number[];
}

export async function serviceStatus(spec: ServiceSpec): Promise<ServiceStatus> {
  return {
    name: spec.name,
    description: spec.description,
    pid: ourPid(spec),
    ready: await probe(spec),
    ports: spec.ports(),
  };
}
