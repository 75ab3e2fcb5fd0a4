/**
 * A durable stack in one process — workers on fresh task queues, a fresh Kafka topic and S3 bucket — for
 * tests and benchmarks against the real local services. Nothing here is used by `starpo train --durable`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import type { WorkflowBundle } from '@temporalio/worker';
import { endpoints } from '../endpoints.ts';
import type { EventsTarget, TaskQueues } from './protocol.ts';
import type { WorkerResources } from './resources.ts';
import { startWorkers, type RunningWorkers } from './worker.ts';
import { type QueueRole } from './protocol.ts';

export interface LocalStack {
  client: Client;
  connection: Connection;
  queues: TaskQueues;
  events: EventsTarget;
  storeUri: string;
  /** Workers started in this process (none when `role` was null). */
  workers: RunningWorkers | null;
  close(): Promise<void>;
}

export interface LocalStackOptions {
  /** Which workers to run in this process; null: none (child processes poll instead). Default 'all'. */
  role?: QueueRole | null;
  workflowBundle?: WorkflowBundle;
  /** Resources of the in-process workers (tests wrap a store to inject faults). */
  resources?: WorkerResources;
  /** A name part that makes queues, topic and bucket recognisable in logs. */
  label?: string;
}

export const uniqueId = (label: string): string => `${label}-${randomBytes(4).toString('hex')}`;

export async function startLocalStack(o: LocalStackOptions = {}): Promise<LocalStack> {
  const id = uniqueId(o.label ?? 'durable');
  const queues = { rollout: `${id}-rollout`, update: `${id}-update` };
  const connection = await Connection.connect({ address: endpoints.temporal.address });
  const client = new Client({ connection });
  const role = o.role === undefined ? 'all' : o.role;
  const workers =
    role === null
      ? null
      : await startWorkers({ role, queues, workflowBundle: o.workflowBundle, resources: o.resources });
  return {
    client,
    connection,
    queues,
    workers,
    events: { topic: `starpo.${id}` },
    storeUri: `s3://${id.toLowerCase()}/runs/`,
    async close() {
      await workers?.shutdown();
      await o.resources?.close();
      await connection.close();
    },
  };
}

/** A `starpo worker` child process whose JSON log lines (stderr) the caller can wait for. */
export interface ChildWorker {
  process: ChildProcess;
  /** Every parsed log line so far. */
  lines: Record<string, unknown>[];
  /** Resolves with the first line (past or future) that matches. */
  waitFor(match: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  /** Resolves when the worker has logged "worker ready". */
  ready: Promise<unknown>;
  exited: Promise<number | null>;
}

const BIN = fileURLToPath(new URL('../../bin/starpo.js', import.meta.url));

export function spawnWorker(role: QueueRole, queues: TaskQueues): ChildWorker {
  const child = spawn(
    process.execPath,
    [BIN, 'worker', '--queue', role, '--rollout-queue', queues.rollout, '--update-queue', queues.update],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, STARPO_LOG_PRETTY: '0', STARPO_LOG_LEVEL: 'info' } },
  );
  const lines: Record<string, unknown>[] = [];
  const waiters: { match: (l: Record<string, unknown>) => boolean; resolve: (l: Record<string, unknown>) => void }[] =
    [];
  createInterface({ input: child.stderr! }).on('line', (text) => {
    let line: Record<string, unknown>;
    try {
      line = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return;
    } // not a log line (e.g. a Node warning)
    lines.push(line);
    for (const w of waiters.filter((x) => x.match(line))) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(line);
    }
  });
  const waitFor = (match: (l: Record<string, unknown>) => boolean) =>
    new Promise<Record<string, unknown>>((resolve) => {
      const seen = lines.find(match);
      if (seen) resolve(seen);
      else waiters.push({ match, resolve });
    });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { process: child, lines, waitFor, ready: waitFor((l) => l.msg === 'worker ready'), exited };
}
