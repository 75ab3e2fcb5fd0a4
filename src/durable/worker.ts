/**
 * Worker processes of the durable driver. A rollout worker polls the "rollout" queue (one activity at a
 * time: its policy engine uses every core it is given; scale out with processes). An update worker polls
 * "update" for the heavy stages and also runs the workflows. `all` runs both in one process (local use).
 */
import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker, bundleWorkflowCode, type WorkflowBundle } from '@temporalio/worker';
import { createRolloutActivities, createUpdateActivities } from '../../activities/index.ts';
import { endpoints } from '../endpoints.ts';
import { DEFAULT_QUEUES, type QueueRole, type TaskQueues } from './protocol.ts';
import { createResources, type WorkerResources } from './resources.ts';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../../workflows/index.ts', import.meta.url));

export interface StartWorkersOptions {
  role: QueueRole;
  queues?: TaskQueues;
  address?: string;
  namespace?: string;
  /** Shared by the activities; default: fresh resources owned (and closed) by the workers. */
  resources?: WorkerResources;
  /** A prebuilt workflow bundle (tests build one per file instead of one per worker). */
  workflowBundle?: WorkflowBundle;
  /** Concurrent update-queue activities (score, reward and filter run side by side). Default 4. */
  updateConcurrency?: number;
}

export interface RunningWorkers {
  workers: Worker[];
  resources: WorkerResources;
  /** Resolves when every worker has stopped (after shutdown, or on a fatal error). */
  done: Promise<void>;
  /** Stops polling, lets running activities finish, then releases the resources. */
  shutdown(): Promise<void>;
}

let bundle: Promise<WorkflowBundle> | undefined;
/** The workflow code, bundled once per process. */
export function workflowBundle(): Promise<WorkflowBundle> {
  bundle ??= bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quietBundlerLogger });
  return bundle;
}

const noop = () => undefined;
const quietBundlerLogger = { trace: noop, debug: noop, info: noop, warn: noop, error: console.error, log: noop };

export async function startWorkers(o: StartWorkersOptions): Promise<RunningWorkers> {
  const queues = o.queues ?? DEFAULT_QUEUES;
  const connection = await NativeConnection.connect({ address: o.address ?? endpoints.temporal.address });
  const resources = o.resources ?? createResources();
  const namespace = o.namespace ?? 'default';
  const workers: Worker[] = [];
  if (o.role !== 'update') {
    workers.push(
      await Worker.create({
        connection,
        namespace,
        taskQueue: queues.rollout,
        activities: createRolloutActivities(resources),
        maxConcurrentActivityTaskExecutions: 1,
      }),
    );
  }
  if (o.role !== 'rollout') {
    workers.push(
      await Worker.create({
        connection,
        namespace,
        taskQueue: queues.update,
        activities: createUpdateActivities(resources),
        workflowBundle: o.workflowBundle ?? (await workflowBundle()),
        maxConcurrentActivityTaskExecutions: o.updateConcurrency ?? 4,
      }),
    );
  }
  const done = Promise.all(workers.map((w) => w.run()))
    .then(noop)
    .finally(async () => {
      if (!o.resources) await resources.close();
      await connection.close();
    });
  const shutdown = async () => {
    for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
    await done;
  };
  return { workers, resources, done, shutdown };
}
