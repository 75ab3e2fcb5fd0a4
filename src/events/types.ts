/**
 * The event model as the rest of starpo sees it: one discriminated union (`kind`) whose members mirror
 * the Avro records in schemas/*.avsc field for field, except that timestamps are Dates (see time.ts) and
 * that a trajectory turn uses the names every turn record in starpo uses (codec.ts maps TURN_AVRO_NAMES).
 */

export interface ToolCall {
  name: string;
  /** Arguments or code as sent to the tool. */
  input: string;
  /** Output as appended to the context (already truncated). */
  output: string;
  ok: boolean;
  /** False for a call written past the per-response limit: recorded, not run (schema v3; older events: true). */
  executed: boolean;
}

export interface Turn {
  /** The state text before the turn (Env.anchor()). */
  observation: string;
  response: string;
  /** The actions the environment executed (Avro `actions`). */
  executedActions: string[];
  envReward: number;
  /** <= 0; applied when an action was dropped or none parsed. */
  formatPenalty: number;
  /** How many actions were executed (Avro `validActions`). */
  actionsValid: number;
  /** Of those, how many changed the state (Avro `effectiveActions`). */
  actionsEffective: number;
  /** Context length the turn was generated from (prompt + history). */
  promptTokens: number;
  responseTokens: number;
  toolCalls: ToolCall[];
}

export interface TrajectoryEvent {
  kind: 'trajectory';
  runId: string;
  lineageId: string;
  iteration: number;
  group: number;
  rolloutIndex: number;
  envName: string;
  envSeed: number;
  /** Iteration of the checkpoint whose weights generated the responses. */
  policyVersion: number;
  turns: Turn[];
  trajectoryReturn: number;
  success: boolean;
  startedAt: Date;
  finishedAt: Date;
  extras: Record<string, string>;
  /** 'train' or 'val' (schema v2; v1 events read as 'train'). */
  split: string;
  /** The token ids as trained (schema v4; empty in older events). */
  tokenIds: number[];
  /** One digit per token: its owner's index in TOKEN_ROLES (0 template … 4 assistant, 5 tool); '' in older events. */
  tokenRoles: string;
}

export interface IterationEvent {
  kind: 'iteration';
  runId: string;
  lineageId: string;
  iteration: number;
  successRateTrain: number;
  /** Null when validation did not run this iteration. */
  successRateVal: number | null;
  returnMean: number;
  returnStd: number;
  inGroupReturnStd: number;
  entropy: number;
  gradNorm: number;
  metrics: Record<string, number>;
  stageTimingsMs: Record<string, number>;
  /** The environment the success figures were measured on (src/envs/spec-id.ts); '' before schema v5. */
  envSpecId: string;
  /** RAGEN-2's collapse probe the collapse/* metrics come from (schema v5); null when not computed. */
  collapse: CollapseProbe | null;
  startedAt: Date;
  finishedAt: Date;
}

/**
 * Sampled first-turn (prompt, response) pairs (rows) and the distinct prompts (columns), with the policy's
 * log-probabilities of every response after every prompt (src/rl/collapse-probe.ts, collapse-metrics.ts).
 */
export interface CollapseProbe {
  rows: number;
  columns: number;
  /** [rows · columns] row-major: per-token mean and per-sequence sum of log p(z_row | x_column). */
  meanLogProb: number[];
  sumLogProb: number[];
  /** The column of each row's own prompt. */
  columnOfRow: number[];
  /** Per column: an id shared by columns whose prompts are the same tokens (first-appearance order). */
  columnSignature: number[];
  /** Trajectories of the batch, and those with a non-empty first response (before sampling). */
  firstTurnTotal: number;
  firstTurnValid: number;
}

export interface CheckpointFileEntry {
  name: string;
  uri: string;
  sha256: string;
  sizeBytes: number;
}

export interface CheckpointEvent {
  kind: 'checkpoint';
  runId: string;
  lineageId: string;
  iteration: number;
  uri: string;
  manifestUri: string;
  files: CheckpointFileEntry[];
  totalBytes: number;
  createdAt: Date;
}

export interface EchoTrapWarning {
  kind: 'echo-trap';
  runId: string;
  lineageId: string;
  iteration: number;
  evidence: Record<string, number>;
  message: string;
  detectedAt: Date;
}

export interface RunEvent {
  kind: 'run';
  runId: string;
  lineageId: string;
  /** FORKED: started by onCollapse=fork after an Echo-Trap warning (schema v5). */
  action: 'STARTED' | 'RESUMED' | 'FORKED';
  parentLineageId: string | null;
  /** Checkpoint iteration this lineage continues from; it writes iterations after it (0 for a fresh start). */
  fromIteration: number;
  /** FORKED: the warning and the change made; null otherwise (and before schema v5). */
  reason: string | null;
  /**
   * onCollapse=fork forks behind this lineage: its learning rates are the config's × forkLrScale^forks (0 before v5).
   */
  forks: number;
  configJson: string;
  at: Date;
}

export type StarpoEvent = RunEvent | TrajectoryEvent | IterationEvent | CheckpointEvent | EchoTrapWarning;
export type EventKind = StarpoEvent['kind'];
export type EventOfKind<K extends EventKind> = Extract<StarpoEvent, { kind: K }>;

/**
 * What a reader met besides events. Notes leave the log whole: a tail a crash cut off (that append never
 * resolved), or a log written before starpo checked integrity. A warning leaves every acknowledged event
 * intact but says something other than the log's writer changed its files (bytes appended after the last
 * indexed block: `foreign-bytes`); reading goes on. Everything else is damage: acknowledged events are
 * missing or altered, and the reader stops there (see ReadOptions.allowPartial).
 */
export type ReadProblemKind =
  | 'torn-tail'
  | 'unverified'
  | 'foreign-bytes'
  | 'undecodable'
  | 'unknown-schema'
  | 'corrupt-block'
  | 'checksum-mismatch'
  | 'digest-mismatch'
  | 'missing-segment'
  | 'empty-segment'
  | 'truncated-segment'
  | 'reordered-segment'
  | 'damaged-index'
  | 'missing-index';

export interface ReadProblem {
  kind: ReadProblemKind;
  message: string;
  /** Human-readable position, e.g. "starpo.events[0]@42" or "runs/r/events/00000001.avro@1234". */
  where: string;
  partition?: number;
  offset?: string;
  file?: string;
  byteOffset?: number;
  /** Acknowledged events the read leaves out from this point on, where the log can tell. */
  eventsLost?: number;
}

export interface ReadOptions {
  /** Called for each note, and for the damage that ends a partial read; the default logs a warning. */
  onProblem?: (problem: ReadProblem) => void;
  /**
   * On damage, end the read there (the events before it are the intact prefix) and report it, instead
   * of failing with CorruptDataError. Default false.
   */
  allowPartial?: boolean;
}

/** An append-only, durable log of events. */
export interface EventLog {
  /**
   * Appends the events in order; resolves once they are durable, rejects (never drops) otherwise. A batch
   * is all-or-nothing per run (one Avro block; one ordered send); after a rejection part of it may have
   * landed, so callers retry the whole batch and replay removes the duplicates by event key (appendOnce,
   * where the log has it, leaves none).
   */
  append(events: readonly StarpoEvent[]): Promise<void>;
  close(): Promise<void>;
}

/** Where a log's records were when an append began: the run's partition and its end offset then. */
export interface LogPosition {
  partition: number;
  offset: string;
}

/**
 * What every attempt of one append shares, kept outside the log (the durable driver keeps it in S3): a name,
 * and the positions the attempts recorded before they wrote. Records are added, never replaced, so a slow
 * attempt cannot raise the position a later one scans from.
 */
export interface AppendFence {
  /** Equal for every attempt of the append, unique among appends (Kafka: the transactional id). */
  readonly id: string;
  /** The lowest position an earlier attempt recorded; undefined when none got that far. */
  read(): Promise<LogPosition | undefined>;
  /** Records this attempt's position beside the others'; resolves once it is durable. */
  write(position: LogPosition): Promise<void>;
}

/** A log that can append a batch exactly once however often the append is retried (the Kafka log). */
export interface ExactlyOnceEventLog extends EventLog {
  /**
   * Appends the events unless an earlier attempt under the same fence did, in one all-or-nothing write. An
   * attempt that is still running when a later one starts can no longer write (it is fenced out).
   */
  appendOnce(events: readonly StarpoEvent[], fence: AppendFence): Promise<void>;
}

/** Reads back one run's events in the order they were appended. */
export interface EventReader {
  /** Every event of the run present when the call started; each call reads from the beginning. */
  read(runId: string, options?: ReadOptions): AsyncIterable<StarpoEvent>;
  close(): Promise<void>;
}
