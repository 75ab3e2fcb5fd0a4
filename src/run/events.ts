/** Building the Avro events of a run from trainer data (src/events/types.ts mirrors schemas/*.avsc). */
import type {
  CheckpointEvent,
  CollapseProbe,
  EchoTrapWarning,
  IterationEvent,
  LineageStart,
  RunEvent,
  TrajectoryEvent,
} from '../events/index.ts';
import type { SavedCheckpoint } from '../storage/index.ts';
import { canonicalConfigJSON, type RlConfig } from '../rl/config.ts';
import type { EchoTrapWarning as Warning } from '../rl/echo-trap.ts';
import type { Trajectory } from '../rl/rollout.ts';
import { runEnvSpecId } from '../rl/run-env.ts';
import { toolCallEvents } from '../tools/events.ts';
import {
  ACTOR_GRAD_NORM,
  ENTROPY_MEAN,
  IN_GROUP_STD_ALL,
  RETURN_MEAN,
  RETURN_STD,
  SUCCESS_RATE,
  VAL_SUCCESS_RATE,
} from '../rl/metric-names.ts';

type Ids = { runId: string; lineageId: string };

export function trajectoryEvents(
  ids: Ids,
  iteration: number,
  policyVersion: number,
  trajectories: readonly Trajectory[],
  split: 'train' | 'val',
  startedAt: Date,
): TrajectoryEvent[] {
  const finishedAt = new Date();
  return trajectories.map((t) => ({
    kind: 'trajectory',
    ...ids,
    iteration,
    group: t.group,
    rolloutIndex: t.index,
    envName: t.env,
    envSeed: t.seed,
    policyVersion,
    trajectoryReturn: t.return,
    success: t.success,
    startedAt,
    finishedAt,
    split,
    extras: { ...t.extras, ...(t.truncated ? { truncated: 'true' } : {}) } as Record<string, string>,
    tokenIds: t.ids,
    tokenRoles: t.roles.join(''),
    turns: t.turns.map((turn) => ({
      observation: turn.observation,
      response: turn.response,
      executedActions: turn.executedActions,
      envReward: turn.envReward,
      formatPenalty: turn.formatPenalty,
      actionsValid: turn.executedActions.length,
      actionsEffective: turn.actionsEffective,
      promptTokens: turn.promptTokens,
      responseTokens: turn.responseTokens,
      toolCalls: toolCallEvents(turn.toolCalls),
    })),
  }));
}

/** What an IterationEvent records besides metrics and timings (schema v5). */
export interface IterationRecordExtras {
  envSpecId: string;
  collapse: CollapseProbe | null;
}

export function iterationEvent(
  ids: Ids,
  iteration: number,
  metrics: Record<string, number>,
  timingsMs: Record<string, number>,
  startedAt: Date,
  extras: IterationRecordExtras,
): IterationEvent {
  const finite = Object.fromEntries(Object.entries(metrics).filter(([, v]) => Number.isFinite(v)));
  return {
    kind: 'iteration',
    ...ids,
    iteration,
    successRateTrain: metrics[SUCCESS_RATE] ?? 0,
    successRateVal: metrics[VAL_SUCCESS_RATE] ?? null,
    returnMean: metrics[RETURN_MEAN] ?? 0,
    returnStd: metrics[RETURN_STD] ?? 0,
    inGroupReturnStd: metrics[IN_GROUP_STD_ALL] ?? 0,
    entropy: metrics[ENTROPY_MEAN] ?? 0,
    gradNorm: metrics[ACTOR_GRAD_NORM] ?? 0,
    metrics: finite,
    stageTimingsMs: timingsMs,
    envSpecId: extras.envSpecId,
    collapse: extras.collapse,
    startedAt,
    finishedAt: new Date(),
  };
}

/** What an iteration reports once it is done (training and validation metrics, stage timings, probe, warning). */
export interface FinishedIteration {
  iteration: number;
  metrics: Record<string, number>;
  timingsMs: Record<string, number>;
  startedAt: Date;
  collapse: CollapseProbe | null;
  warning: Warning | null;
}

/** The iteration's IterationEvent and, when the detector fired, its warning: what both drivers publish. */
export function iterationEvents(c: RlConfig, ids: Ids, r: FinishedIteration): (IterationEvent | EchoTrapWarning)[] {
  const extras = { envSpecId: runEnvSpecId(c), collapse: r.collapse };
  return [
    iterationEvent(ids, r.iteration, r.metrics, r.timingsMs, r.startedAt, extras),
    ...(r.warning ? [warningEvent(ids, r.warning)] : []),
  ];
}

export function warningEvent(ids: Ids, w: Warning): EchoTrapWarning {
  return {
    kind: 'echo-trap',
    ...ids,
    iteration: w.iteration,
    evidence: w.evidence,
    message: w.message,
    detectedAt: new Date(),
  };
}

/** The RunEvent that opens lineage `start` (STARTED, RESUMED or FORKED) of a run trained with config `c`. */
export function runEvent(
  runId: string,
  c: RlConfig,
  start: LineageStart,
  action: RunEvent['action'],
  reason: string | null,
): RunEvent {
  return {
    kind: 'run',
    runId,
    lineageId: start.lineageId,
    action,
    parentLineageId: start.parentLineageId,
    fromIteration: start.fromIteration,
    reason,
    forks: start.forks ?? 0,
    configJson: canonicalConfigJSON(c),
    at: new Date(),
  };
}

export function checkpointEvent(saved: SavedCheckpoint): CheckpointEvent {
  return {
    kind: 'checkpoint',
    runId: saved.runId,
    lineageId: saved.lineageId,
    iteration: saved.iteration,
    uri: saved.uri,
    manifestUri: saved.manifestUri,
    files: saved.files,
    totalBytes: saved.totalBytes,
    createdAt: new Date(saved.manifest.createdAt),
  };
}
