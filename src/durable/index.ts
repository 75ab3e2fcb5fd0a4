/**
 * The durable driver's client-side face: what the CLI and other modules call. Runs are Temporal workflows
 * (workflows/), their stages activities (activities/) on workers started by `startWorkers` (./worker.ts,
 * not re-exported here so that clients do not load the worker, the models and onnxruntime).
 */
import { startResume, type ResumeOptions } from './client.ts';

export { followRun, runStatus, startResume, submitRun, DEFAULT_STORE_URI } from './client.ts';
export type { ClientOptions, ResumeOptions, RunHandle, RunStatus, SubmitOptions } from './client.ts';
export type { Progress, RunOutcome, TrainingRunInput } from './protocol.ts';

export interface ResumeSummary {
  runId: string;
  lineageId: string;
  parentLineageId: string;
  fromIteration: number;
  workflowId: string;
  workflowRunId: string;
}

/**
 * `starpo resume <run> --from-iteration k --durable`: starts a new lineage of the durable run from its
 * checkpoint k and returns at once (workers carry it on; `starpo status <run>` follows it). Store, topic and
 * queues default to the run's latest execution; `runsDir` (the embedded driver's) does not apply.
 */
export async function resumeDurable(
  runId: string,
  fromIteration: number,
  opts: ResumeOptions & { runsDir?: string } = {},
): Promise<ResumeSummary> {
  const { runsDir: _unused, ...options } = opts;
  const { handle, run, parentLineageId } = await startResume(runId, fromIteration, options);
  return {
    runId,
    lineageId: run.lineageId,
    parentLineageId,
    fromIteration,
    workflowId: handle.workflowId,
    workflowRunId: handle.firstExecutionRunId,
  };
}
