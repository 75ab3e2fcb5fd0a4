/**
 * The report model: everything the HTML page shows, as plain JSON built from the event log alone.
 * The same model feeds the static report (embedded in the file) and the live dashboard (served as JSON
 * and polled), so the page has one renderer and the data logic stays testable without a browser.
 */
import type { ToolCall } from '../events/index.ts';

/** One iteration as charted: every metric of the IterationEvent plus its stage timings. */
export interface IterationPoint {
  iteration: number;
  metrics: Record<string, number>;
  timingsMs: Record<string, number>;
}

export interface WarningMark {
  iteration: number;
  message: string;
  evidence: Record<string, number>;
}

/** A lineage onCollapse=fork started: where it went back to, and why (the warning and the change made). */
export interface ForkMark {
  lineageId: string;
  parentLineageId: string | null;
  /** The checkpoint it continues from; its iterations come after it. */
  fromIteration: number;
  /** Forks behind the lineage (its learning rates are the config's × forkLrScale^forks). */
  forks: number;
  reason: string;
}

/** A symbol of the environment's state rendering; `style` is a CSS-safe slug of its meaning. */
export interface LegendEntry {
  symbol: string;
  meaning: string;
  style: string;
}

export interface TurnView {
  observation: string;
  response: string;
  actions: string[];
  envReward: number;
  formatPenalty: number;
  toolCalls: ToolCall[];
}

/** What the mask audit says about one trajectory's tokens (see tokens.ts). */
export interface TokenAudit {
  /** Tokens per role, indexed like TOKEN_ROLES. */
  counts: number[];
  /** Tokens with loss weight 1 (the assistant's). */
  loss: number;
  /**
   * Each model-written span (assistant tokens and the tool output inside them), in order: [start, end)
   * and whether its last token is one of the run's stop tokens (null when the stop tokens are unknown).
   */
  responses: Array<{ start: number; end: number; stop: boolean | null }>;
  /** Inconsistencies between the token log and the turns, one sentence each. */
  problems: string[];
}

/** A trajectory's token log: the ids as trained and one role digit per token. */
export interface TrajectoryTokens {
  ids: number[];
  roles: string;
  audit: TokenAudit;
}

export interface TrajectoryView {
  iteration: number;
  split: string;
  group: number;
  rollout: number;
  seed: number;
  return: number;
  success: boolean;
  turns: TurnView[];
  /** The state after the last turn, re-enacted from the seed (see final-state.ts); absent when unknown. */
  finalObservation?: string;
  /** Null for events without a token log (written before schema v4). */
  tokens: TrajectoryTokens | null;
}

/**
 * Per-token text for a run's shown trajectories, shared by all of them (a trajectory carries ids only).
 * An id missing from `text` and `bytes` could not be decoded (no tokenizer, or not in its vocabulary).
 */
export interface RunTokens {
  /** TOKEN_ROLES, so the page need not repeat them. */
  roles: string[];
  /** Where the tokenizer came from, e.g. "checkpoint main/00000003"; null when there is none. */
  tokenizer: string | null;
  /** Why the page shows no text, when it does not. */
  note: string | null;
  /** Ids that end an assistant turn; null when unknown. */
  stop: number[] | null;
  /** id → that one token decoded on its own. */
  text: Record<string, string>;
  /** id → hex bytes, for tokens that are not whole UTF-8 characters (a piece of a multi-byte one). */
  bytes: Record<string, string>;
  /** Control tokens among them (<|im_start|>, <eos>), shown as chips. */
  special: number[];
}

export interface OracleCeiling {
  /** Mean over the validation seeds of the best success probability any policy reaches. */
  successRate: number;
  seeds: number;
}

export interface RunReport {
  runId: string;
  /** Environment preset name from the config ('' before the run has written its config). */
  env: string;
  /** The environment-spec id its IterationEvents recorded (src/envs/spec-id.ts); '' when none did (before v5). */
  envSpecId: string;
  /** config.iterations, or 0 when unknown. */
  plannedIterations: number;
  /** Highest iteration with an IterationEvent (0 before the first one completes). */
  lastIteration: number;
  /** The resolved config as saved with the run ({} when unknown). */
  config: Record<string, unknown>;
  iterations: IterationPoint[];
  warnings: WarningMark[];
  /** Lineages started by onCollapse=fork in the surviving history, oldest first. */
  forks: ForkMark[];
  oracle: OracleCeiling | null;
  /** Empty for text-only environments (Bandit, Countdown): observations are then shown as text. */
  legend: LegendEntry[];
  /** Iterations whose trajectories the report carries (a sample; see `trajectoryIterationsTotal`). */
  trajectoryIterations: number[];
  trajectoryIterationsTotal: number;
  trajectories: TrajectoryView[];
  tokens: RunTokens;
}

export interface ChartSeries {
  /** The run it belongs to; '' for a reference line all the runs share. */
  run: string;
  label: string;
  /** [iteration, value]; only finite values. */
  points: Array<[number, number]>;
  /** 'reference' = a constant line such as the oracle ceiling. */
  kind: 'line' | 'reference';
}

export interface ChartMarker {
  run: string;
  iteration: number;
  message: string;
}

export interface ChartModel {
  id: string;
  title: string;
  yLabel: string;
  series: ChartSeries[];
  /** Echo-Trap warnings, drawn as vertical lines on every chart. */
  markers: ChartMarker[];
  yMin?: number;
  yMax?: number;
}

/**
 * Progress of a running run. `source` says who reported it: the event log (what has completed) or,
 * later, the durable driver's Temporal query (which can also name the stage in progress).
 */
export interface LiveStatus {
  runId: string;
  iteration: number;
  iterations: number;
  source: 'events' | 'temporal';
  stage?: string;
  updatedAt: string;
}

export interface ReportModel {
  title: string;
  generatedAt: string;
  runs: RunReport[];
  charts: ChartModel[];
  /** Null in a static report; the dashboard fills it on every poll. */
  live: LiveStatus[] | null;
}
