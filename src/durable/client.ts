/**
 * Client side of the durable driver: submit a run, follow its progress, ask its status, start a new
 * lineage from a checkpoint. A config is resolved and validated here, before anything is submitted, so
 * a malformed one is rejected with the field named and no workflow ever starts.
 */
import { randomBytes } from 'node:crypto';
import {
  Client,
  Connection,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  defaultPayloadConverter,
  type WorkflowHandle,
  type WorkflowHandleWithFirstExecutionRunId,
} from '@temporalio/client';
import { ConfigError, StarpoError } from '../errors.ts';
import { assertSafeId } from '../events/ids.ts';
import { ROOT_LINEAGE, durableResumeLineageId } from '../events/lineage.ts';
import { latestLineageAt } from '../run/resume-plan.ts';
import { canonicalConfigJSON, type RlConfig } from '../rl/config.ts';
import { createCheckpointStore } from '../storage/index.ts';
import { endpoints } from '../endpoints.ts';
import { localDataServices, recordRunOn } from '../services/run-ledger.ts';
import { log } from '../log.ts';
import {
  DEFAULT_OPTIONS,
  DEFAULT_STORE_URI,
  PROGRESS_QUERY,
  WORKFLOW_TYPE,
  workflowIdOf,
  type DurableOptions,
  type EventsTarget,
  type Progress,
  type RunOutcome,
  type RunRef,
  type TrainingRunInput,
} from './protocol.ts';

export { DEFAULT_STORE_URI };

export interface ClientOptions {
  address?: string;
  namespace?: string;
  /** An existing client (tests); otherwise one is connected and closed per call. */
  client?: Client;
}

export interface SubmitOptions extends ClientOptions {
  runId?: string;
  storeUri?: string;
  events?: EventsTarget;
  options?: Partial<DurableOptions>;
  stopAfter?: number;
}

export type RunHandle = WorkflowHandle;

export async function withClient<T>(o: ClientOptions, fn: (client: Client) => Promise<T>): Promise<T> {
  if (o.client) return fn(o.client);
  const connection = await Connection.connect({ address: o.address ?? endpoints.temporal.address }).catch(
    (cause: Error) => {
      throw new StarpoError(`cannot reach Temporal at ${o.address ?? endpoints.temporal.address}: ${cause.message}`, {
        cause,
        retryable: true,
      });
    },
  );
  try {
    return await fn(new Client({ connection, namespace: o.namespace ?? 'default' }));
  } finally {
    await connection.close();
  }
}

export function mergeOptions(partial: Partial<DurableOptions> = {}): DurableOptions {
  const o = { ...DEFAULT_OPTIONS, ...partial, queues: { ...DEFAULT_OPTIONS.queues, ...partial.queues } };
  for (const k of [
    'rolloutShards',
    'chunkGroups',
    'continueAsNewEvery',
    'heartbeatTimeoutMs',
    'maxAttempts',
  ] as const) {
    if (!Number.isInteger(o[k]) || o[k] < 1) throw new ConfigError(k, `must be an integer ≥ 1, got ${o[k]}`);
  }
  return o;
}

/** A new run's options: the config's heartbeat timeout unless the caller gives one. */
export function runOptions(config: RlConfig, partial: Partial<DurableOptions> = {}): DurableOptions {
  return mergeOptions({ heartbeatTimeoutMs: config.heartbeatTimeoutMs, ...partial });
}

function runRef(runId: string, lineageId: string, o: SubmitOptions): RunRef {
  assertSafeId('runId', runId);
  return { runId, lineageId, storeUri: o.storeUri ?? DEFAULT_STORE_URI, events: o.events ?? {} };
}

async function start(client: Client, input: TrainingRunInput): Promise<WorkflowHandleWithFirstExecutionRunId> {
  const workflowId = workflowIdOf(input.run.runId);
  return client.workflow
    .start(WORKFLOW_TYPE, { taskQueue: input.options.queues.update, workflowId, args: [input] })
    .catch((cause: Error) => {
      if (!(cause instanceof WorkflowExecutionAlreadyStartedError)) throw cause;
      throw new ConfigError(
        'runId',
        `run ${input.run.runId} is already running (workflow ${workflowId}); stop it first`,
        { cause },
      );
    });
}

/** Submits a new run (the config is already resolved and validated). */
export async function submitRun(
  config: RlConfig,
  o: SubmitOptions = {},
): Promise<{
  handle: WorkflowHandleWithFirstExecutionRunId;
  run: RunRef;
}> {
  const events = { ...o.events, retentionMs: config.eventRetentionMs };
  const run = runRef(o.runId ?? `run-${new Date().toISOString().replace(/[:.]/g, '-')}`, ROOT_LINEAGE, {
    ...o,
    events,
  });
  const input: TrainingRunInput = {
    run,
    options: runOptions(config, o.options),
    configJson: canonicalConfigJSON(config),
    stopAfter: o.stopAfter,
  };
  const started = await withClient(o, async (client) => ({ handle: await start(client, input), run }));
  noteLocalData(run);
  return started;
}

/** Lists the run in the ledgers of the local services holding its data (run-ledger.ts); never fails the run. */
function noteLocalData(run: RunRef): void {
  try {
    for (const service of localDataServices(run.events, run.storeUri)) recordRunOn(service, run.runId);
  } catch (err) {
    log.warn({ err: (err as Error).message, runId: run.runId }, 'could not list the run in the local services');
  }
}

/** Waits for the run to finish, reporting progress every `pollMs` while it runs. */
export async function followRun(
  handle: RunHandle,
  onProgress: (p: Progress) => void,
  pollMs = 1000,
): Promise<RunOutcome> {
  let finished = false;
  const result = (handle.result() as Promise<RunOutcome>).finally(() => {
    finished = true;
  });
  while (!finished) {
    await Promise.race([result.catch(() => undefined), new Promise((r) => setTimeout(r, pollMs))]);
    if (finished) break;
    await handle.query<Progress>(PROGRESS_QUERY).then(onProgress, () => undefined); // no worker: try again later
  }
  return result;
}

export interface RunStatus {
  workflowId: string;
  status: string;
  progress: Progress | null;
}

/** The run's workflow status and, when a worker answers, its progress. */
export async function runStatus(runId: string, o: ClientOptions = {}): Promise<RunStatus> {
  return withClient(o, async (client) => {
    const handle = client.workflow.getHandle(workflowIdOf(runId));
    const description = await handle.describe().catch((err: Error) => {
      if (err instanceof WorkflowNotFoundError) throw new ConfigError('run', `no durable run ${runId}`, { cause: err });
      throw err;
    });
    const query = handle.query<Progress>(PROGRESS_QUERY);
    const timeout = new Promise<null>((r) => setTimeout(() => r(null), 5000).unref());
    const progress = await Promise.race([query.catch(() => null), timeout]);
    return { workflowId: description.workflowId, status: description.status.name, progress };
  });
}

export interface ResumeOptions extends SubmitOptions {
  /** Lineage whose checkpoint to continue from; default: the newest lineage that has one at that iteration. */
  parentLineageId?: string;
}

/** The input the run's latest workflow execution started with (its store, topic, queues), if any. */
async function previousInput(client: Client, runId: string): Promise<TrainingRunInput | undefined> {
  try {
    const history = await client.workflow.getHandle(workflowIdOf(runId)).fetchHistory();
    const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    return payload ? defaultPayloadConverter.fromPayload<TrainingRunInput>(payload) : undefined;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
}

/**
 * Starts a new lineage of `runId` from its checkpoint at `fromIteration`: the events of the abandoned
 * lineage stay in the log, and replay prefers the new one for every later iteration. Store, event topic,
 * queues and options default to those of the run's latest execution.
 */
export async function startResume(
  runId: string,
  fromIteration: number,
  o: ResumeOptions = {},
): Promise<{
  handle: WorkflowHandleWithFirstExecutionRunId;
  run: RunRef;
  parentLineageId: string;
}> {
  return withClient(o, async (client) => {
    const before = await previousInput(client, runId);
    const storeUri = o.storeUri ?? before?.run.storeUri ?? DEFAULT_STORE_URI;
    const store = createCheckpointStore(storeUri);
    const parentLineageId = o.parentLineageId ?? (await latestLineageAt(store, runId, fromIteration));
    const lineageId = durableResumeLineageId(fromIteration, randomBytes(3).toString('hex'));
    const run = runRef(runId, lineageId, { ...o, storeUri, events: o.events ?? before?.run.events });
    const options = mergeOptions({ ...before?.options, ...o.options });
    const input: TrainingRunInput = {
      run,
      options,
      resume: { parentLineageId, fromIteration },
      stopAfter: o.stopAfter,
    };
    return { handle: await start(client, input), run, parentLineageId };
  });
}
