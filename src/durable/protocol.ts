/**
 * What the trainingRun workflow and its activities exchange: small JSON objects and references (store
 * URIs, artifact keys), never tensors or trajectories — Temporal keeps every payload in the workflow
 * history (limit 2 MB; activities warn above 256 KB). This module is imported by the workflow bundle,
 * so it must stay free of Node built-ins and of anything non-deterministic.
 */
import type { CollapseAction } from '../rl/collapse-action.ts';
import type { CheckpointRef } from '../run/checkpoint.ts';
import type { StageName } from '../rl/stages/names.ts';

/** Where a durable run keeps its checkpoints, artifacts and sealed events unless told otherwise. */
export const DEFAULT_STORE_URI = 's3://starpo/runs/';

export const WORKFLOW_TYPE = 'trainingRun';
/** Signal and query names of trainingRun (clients use the names; the workflow defines them from these). */
export const SIGNALS = { pause: 'pause', resume: 'resume', stop: 'stop' } as const;
export const PROGRESS_QUERY = 'progress';
/** Workflow id of a run: one id for all its lineages and continue-as-new runs (the latest is the live one). */
export const workflowIdOf = (runId: string): string => `starpo-${runId}`;
export const DEFAULT_QUEUES: TaskQueues = { rollout: 'rollout', update: 'update' };

/** Error types no retry can fix; workflows match failures on `type` (the StarpoError class name). */
export const NON_RETRYABLE_TYPES = [
  'ConfigError',
  'CorruptDataError',
  'BatchError',
  'CheckpointConflictError',
  'CheckpointNotFoundError',
];

export interface TaskQueues {
  /** Rollout shards and validation (CPU workers, scaled out). */
  rollout: string;
  /** Scoring, light stages, update, checkpoint; also the workflow's own queue (the GPU worker). */
  update: string;
}

/** Where a run's events go. Only Kafka: several worker processes append concurrently. */
export interface EventsTarget {
  topic?: string;
  brokers?: string[];
  /** The topic's retention.ms (the run config's eventRetentionMs); absent = forever. */
  retentionMs?: number;
}

/** Identifies one lineage of a run and where its data lives; every activity input carries it. */
export interface RunRef {
  runId: string;
  lineageId: string;
  /** onCollapse=fork forks behind the lineage: its learning rates are the config's × forkLrScale^forks (absent = 0). */
  forks?: number;
  /** Checkpoints and artifacts: `s3://bucket/prefix/` (or `file:///dir` for a single machine). */
  storeUri: string;
  events: EventsTarget;
}

/** The parts of the run config the workflow needs to schedule iterations (returned by startRun). */
export interface RunPlan {
  iterations: number;
  envGroups: number;
  groupSize: number;
  valEvery: number;
  /** DAPO: after the rollout, plan and play more groups until enough carry signal (absent = off). */
  dynamicSampling?: boolean;
  /**
   * Iteration i plays policy version max(0, i − 1 − k) beside the updates before it
   * (src/rl/async-schedule.ts; absent = 0).
   */
  asyncStaleness?: number;
}

export interface DurableOptions {
  queues: TaskQueues;
  /** Rollout activities per iteration; each plays a contiguous range of groups. */
  rolloutShards: number;
  /** Groups a shard plays per batch; each finished chunk is heartbeated so a retry skips it. */
  chunkGroups: number;
  /** Continue-as-new after this many iterations in one workflow run (or when the server suggests it). */
  continueAsNewEvery: number;
  /**
   * Heartbeat timeout of every activity: how fast a dead worker's activity is retried elsewhere. A new run
   * takes its config's heartbeatTimeoutMs; a resumed one keeps its previous execution's.
   */
  heartbeatTimeoutMs: number;
  /** Attempts per activity before the workflow fails (retryable errors only). */
  maxAttempts: number;
  /** Keep per-iteration artifacts after the iteration's checkpoint (default: delete them). */
  keepArtifacts: boolean;
}

export const DEFAULT_OPTIONS: DurableOptions = {
  queues: DEFAULT_QUEUES,
  rolloutShards: 2,
  chunkGroups: 2,
  continueAsNewEvery: 10,
  heartbeatTimeoutMs: 10_000, // the config field's default (src/rl/config-fields.ts), which this bundle cannot import
  maxAttempts: 20,
  keepArtifacts: false,
};

/** One line of history for progress displays (carried across continue-as-new, last few only). */
export interface IterationSummary {
  iteration: number;
  success: number;
  valSuccess: number | null;
  inGroupStd: number;
  entropy: number;
  gradNorm: number;
  ms: number;
  warning: string | null;
}

/** An iteration's rollout as the workflow holds it until that iteration trains. */
export interface PlayedRollout {
  iteration: number;
  /** Trajectory artifacts, in group order. */
  rollout: string[];
  /** DAPO's sampling plan, when the run samples dynamically. */
  sampling?: string;
  /** Workflow time the rollout took (its stages' activities, scheduling included). */
  ms: number;
}

/** What continue-as-new hands to the next workflow run. */
export interface Carry {
  /** Forks behind the lineage (StartRunResult.forks), kept across continue-as-new. */
  forks?: number;
  plan: RunPlan;
  policy: CheckpointRef;
  nextIteration: number;
  paused: boolean;
  recent: IterationSummary[];
  /** Asynchronous runs: the checkpoints of the policy versions later rollouts play with, oldest first. */
  versions?: CheckpointRef[];
  /** Asynchronous runs: rollouts already played for iterations not yet trained. */
  rollouts?: PlayedRollout[];
}

/**
 * A new lineage continuing from checkpoint `fromIteration` of `parentLineageId`; `fork`: started by onCollapse=fork.
 */
export interface ResumeFrom {
  parentLineageId: string;
  fromIteration: number;
  fork?: { reason: string; forks: number };
}

export interface TrainingRunInput {
  run: RunRef;
  options: DurableOptions;
  /** A new run: its canonical config JSON (validated again by startRun). Omitted on resume. */
  configJson?: string;
  resume?: ResumeFrom;
  /** Set by continue-as-new only. */
  carry?: Carry;
  /** Stop after this iteration (tests simulate a crash); default: the config's iterations. */
  stopAfter?: number;
}

/** Where a durable iteration is, for progress: starting, or one of the stages it times (rl/stages/names.ts). */
export type Stage =
  'starting' | Extract<StageName, 'rollout' | 'score' | 'advantage' | 'update' | 'validate' | 'publish'>;

export interface Progress {
  runId: string;
  lineageId: string;
  /** Last completed iteration (the start point before any completes). */
  iteration: number;
  iterations: number;
  /** 'paused': held at an iteration boundary (a pause signalled mid-iteration takes effect after it). */
  stage: Stage | 'paused' | 'done' | 'stopped';
  /** A pause was signalled (and not yet resumed). */
  paused: boolean;
  stopping: boolean;
  recent: IterationSummary[];
}

export interface RunOutcome {
  runId: string;
  lineageId: string;
  lastIteration: number;
  stopped: boolean;
  checkpoint: CheckpointRef;
  recent: IterationSummary[];
}

/** Metrics as they cross Temporal: JSON has no NaN or ±Infinity, so those travel as strings. */
export type WireMetrics = Record<string, number | string>;

export function toWire(m: Record<string, number>): WireMetrics {
  return Object.fromEntries(Object.entries(m).map(([k, v]) => [k, Number.isFinite(v) ? v : String(v)]));
}

export function fromWire(m: WireMetrics): Record<string, number> {
  return Object.fromEntries(Object.entries(m).map(([k, v]) => [k, typeof v === 'string' ? Number(v) : v]));
}

// ---- activity inputs and results ----

export interface StartRunInput {
  run: RunRef;
  configJson?: string;
  resume?: ResumeFrom;
}

export interface StartRunResult {
  plan: RunPlan;
  policy: CheckpointRef;
  nextIteration: number;
  /** Asynchronous runs resumed from a checkpoint: the older versions it names (TrainerState.behaviourPolicies). */
  versions?: CheckpointRef[];
  /** Forks behind the lineage (the fork's, else the parent checkpoint's); the workflow puts it into its RunRef. */
  forks: number;
}

export interface ForkPointInput {
  run: RunRef;
  /** The detector's first warning sign: the fork starts from the newest surviving checkpoint before it. */
  before: number;
}

/**
 * Every stage of iteration i reads the policy of checkpoint `policy`: iteration i − 1 (the policy the update
 * trains from), except the rollout, which reads the version the schedule gives (i − 1 unless asynchronous).
 */
export interface StageInput {
  run: RunRef;
  iteration: number;
  policy: CheckpointRef;
}

export interface RolloutShardInput extends StageInput {
  /** Sampling round (DAPO dynamic sampling plays more groups in later rounds; 0 otherwise). */
  round?: number;
  shard: number;
  /** The iteration's group numbers this shard plays. */
  groups: number[];
  chunkGroups: number;
}

export interface ShardResult {
  keys: string[];
  trajectories: number;
}

/** Stages after rollout read the iteration's trajectories from these keys, in this order. */
export interface BatchInput extends StageInput {
  rollout: string[];
}

export interface ArtifactResult {
  key: string;
}

export interface AdvantageActivityInput extends BatchInput {
  scored: string;
  rewards: string;
  kept: string;
  /** The dynamic-sampling plan's artifact, when the run samples dynamically. */
  sampling?: string;
}

export interface FilterActivityInput extends BatchInput {
  sampling?: string;
}

export interface SamplingPlanInput extends BatchInput {
  /** Sampling rounds done so far (≥ 1). */
  tries: number;
}

export interface SamplingPlanResult extends ArtifactResult {
  action: 'done' | 'sample-more' | 'give-up';
  groupsNeeded: number;
}

export interface AdvantageResult extends ArtifactResult {
  /** Batch, filter and advantage metrics (the update adds its own). */
  metrics: WireMetrics;
}

export interface UpdateActivityInput extends BatchInput {
  scored: string;
  advantage: string;
  metrics: WireMetrics;
  /** Asynchronous runs: the checkpoints checkpoint i names for the rollouts after it (none when absent). */
  behaviourPolicies?: CheckpointRef[];
}

export interface UpdateResult {
  checkpoint: CheckpointRef;
  /** Every training metric of the iteration (validation excluded). */
  metrics: WireMetrics;
  warning: { message: string; evidence: WireMetrics } | null;
  /** The stop or fork the warning calls for under onCollapse (src/rl/collapse-action.ts); null otherwise. */
  collapse?: CollapseAction | null;
}

export interface ValidateInput {
  run: RunRef;
  iteration: number;
  policy: CheckpointRef;
}

export interface PublishInput {
  run: RunRef;
  iteration: number;
  checkpoint: CheckpointRef;
  /** Training and validation metrics. */
  metrics: WireMetrics;
  timingsMs: Record<string, number>;
  warning: UpdateResult['warning'];
  startedAtMs: number;
  keepArtifacts: boolean;
}

/** Contiguous, near-equal ranges of group numbers, one per shard (fewer shards when groups run out). */
export function shardGroups(envGroups: number, shards: number): number[][] {
  const n = Math.max(1, Math.min(shards, envGroups));
  const out: number[][] = [];
  for (let s = 0; s < n; s++) {
    const from = Math.floor((s * envGroups) / n);
    const to = Math.floor(((s + 1) * envGroups) / n);
    out.push(Array.from({ length: to - from }, (_, k) => from + k));
  }
  return out;
}

/** Chunks of at most `size` consecutive items. */
export function chunksOf<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += Math.max(1, size)) out.push(items.slice(i, i + Math.max(1, size)));
  return out;
}

/** Which task queues a worker polls. */
export type QueueRole = 'rollout' | 'update' | 'all';
export const QUEUE_ROLES: readonly QueueRole[] = ['rollout', 'update', 'all'];
