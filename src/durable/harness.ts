/**
 * A durable stack in one process — workers on fresh task queues, a fresh Kafka topic and S3 bucket — for
 * tests and benchmarks against the real local services. Nothing here is used by `starpo train --durable`.
 */
import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import type { WorkflowBundle } from '@temporalio/worker';
import { endpoints } from '../services/endpoints.ts';
import type { EventsTarget, TaskQueues } from './protocol.ts';
import { startWorkers, type QueueRole, type RunningWorkers } from './worker.ts';

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
  const workers = role === null ? null : await startWorkers({ role, queues, workflowBundle: o.workflowBundle });
  return {
    client, connection, queues, workers,
    events: { topic: `starpo.${id}` },
    storeUri: `s3://${id.toLowerCase()}/runs/`,
    async close() {
      await workers?.shutdown();
      await connection.close();
    },
  };
}
