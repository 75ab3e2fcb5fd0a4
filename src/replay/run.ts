/**
 * Replaying a run for offline analysis: stream the surviving events (deduplicated, one lineage per
 * iteration: src/events/replay.ts), collect each iteration's trajectories until its IterationEvent
 * arrives (the trainer appends them in one batch, trajectories first), recompute the trajectory-derived
 * metrics and compare them with the recorded ones. Trajectories in range also go to the sinks (exports,
 * SFT data) as they stream by, so memory holds one iteration at a time.
 * Notes about the log (a torn tail, a log too old to be tamper-evident) are collected with their position;
 * a damaged log fails the replay, or with `allowPartial` replays its intact prefix and lists the damage.
 */
import { ConfigError } from '../errors.ts';
import { configFromJSON, type RlConfig } from '../rl/config.ts';
import {
  replay,
  type DropReason,
  type EventReader,
  type IterationEvent,
  type ReadProblem,
  type TrajectoryEvent,
} from '../events/index.ts';
import { compareMetrics, type Mismatch } from './compare.ts';
import { recomputeIteration } from './recompute.ts';
import { collapseMetrics } from '../rl/collapse-metrics.ts';
import { envSpecId } from '../envs/index.ts';
import { episodeSetup, type EpisodeSetup } from './reenact.ts';

export interface IterationCheck {
  iteration: number;
  lineageId: string;
  /** The environment-spec id the iteration recorded ('' before schema v5). */
  envSpecId: string;
  trainTrajectories: number;
  valTrajectories: number;
  /** Recorded metrics compared. */
  checked: number;
  mismatches: Mismatch[];
  /** Trajectories whose replayed episode disagrees with the log, or a missing batch. */
  divergences: string[];
  notRecomputable: string[];
  ok: boolean;
}

export interface ReplayOutcome {
  runId: string;
  iterations: IterationCheck[];
  trajectories: number;
  problems: ReadProblem[];
  /** Events replay left out: copies of one key, and events of superseded lineages. */
  dropped: Record<DropReason, number>;
  /** Iterations with trajectory events but no IterationEvent (an iteration the run never finished). */
  unfinished: number[];
  /** Lineages onCollapse=fork started in the surviving history: where they went back to and why. */
  forks: { lineageId: string; parentLineageId: string | null; fromIteration: number; forks: number; reason: string }[];
}

/** Receives the trajectories in range, in log order, with the run's episode settings. */
export interface ReplaySink {
  write(e: TrajectoryEvent, setup: EpisodeSetup): Promise<void>;
}

export interface ReplayRunOptions {
  reader: EventReader;
  runId: string;
  fromIteration?: number;
  toIteration?: number;
  /** The config when the log holds no RunEvent before the first trajectory (older logs). */
  fallbackConfig?: () => Promise<RlConfig>;
  sinks?: readonly ReplaySink[];
  onIteration?: (check: IterationCheck) => void;
  /** Replay the intact prefix of a damaged log (the damage listed in `problems`) instead of failing. */
  allowPartial?: boolean;
}

type Bucket = { train: TrajectoryEvent[]; val: TrajectoryEvent[] };

export function checkIteration(
  c: RlConfig,
  setup: EpisodeSetup,
  recorded: IterationEvent,
  bucket: Bucket,
): IterationCheck {
  const base = {
    iteration: recorded.iteration,
    lineageId: recorded.lineageId,
    envSpecId: recorded.envSpecId,
    trainTrajectories: bucket.train.length,
    valTrajectories: bucket.val.length,
  };
  if (bucket.train.length === 0) {
    const divergences = ['no training trajectory events survive for this iteration'];
    return { ...base, checked: 0, mismatches: [], divergences, notRecomputable: [], ok: false };
  }
  const re = recomputeIteration(c, setup, bucket.train, bucket.val);
  // The collapse metrics come from the probe the event carries (the policy's log-probabilities).
  const cmp = compareMetrics(recorded, {
    ...re.metrics,
    ...(recorded.collapse ? collapseMetrics(recorded.collapse) : {}),
  });
  const spec = envSpecId(setup.env);
  const divergences =
    recorded.envSpecId !== '' && recorded.envSpecId !== spec
      ? [
          ...re.divergences,
          `environment spec ${recorded.envSpecId} recorded, the run's config gives ${spec} now ` +
            '(its definition changed)',
        ]
      : re.divergences;
  const ok = cmp.mismatches.length === 0 && divergences.length === 0;
  const { mismatches, notRecomputable } = cmp;
  return { ...base, checked: cmp.checked.length, mismatches, divergences, notRecomputable, ok };
}

/** Config and episode settings, from the first RunEvent or, failing that, the fallback. */
class RunContext {
  private config: RlConfig | null = null;
  private setup: EpisodeSetup | null = null;
  constructor(
    private readonly runId: string,
    private readonly fallback?: () => Promise<RlConfig>,
  ) {}

  offer(configJson: string): void {
    this.config ??= configFromJSON(configJson);
  }

  async get(): Promise<{ c: RlConfig; setup: EpisodeSetup }> {
    if (!this.config) {
      if (!this.fallback) {
        throw new ConfigError('run', `run ${this.runId}: no RunEvent with its config before its trajectories`);
      }
      this.config = await this.fallback();
    }
    this.setup ??= episodeSetup(this.config);
    return { c: this.config, setup: this.setup };
  }
}

export async function replayRun(o: ReplayRunOptions): Promise<ReplayOutcome> {
  const out: ReplayOutcome = {
    runId: o.runId,
    iterations: [],
    trajectories: 0,
    problems: [],
    unfinished: [],
    forks: [],
    dropped: { duplicate: 0, superseded: 0 },
  };
  const context = new RunContext(o.runId, o.fallbackConfig);
  const buckets = new Map<number, Bucket>();
  const inRange = (i: number) => i >= (o.fromIteration ?? 0) && i <= (o.toIteration ?? Infinity);
  const events = replay(o.reader, o.runId, {
    onProblem: (p) => out.problems.push(p),
    onDropped: (_, why) => out.dropped[why]++,
    allowPartial: o.allowPartial,
  });
  for await (const e of events) {
    if (e.kind === 'run') context.offer(e.configJson);
    if (e.kind === 'run' && e.action === 'FORKED') {
      const { lineageId, parentLineageId, fromIteration, forks, reason } = e;
      out.forks.push({ lineageId, parentLineageId, fromIteration, forks, reason: reason ?? '' });
    }
    if ((e.kind !== 'trajectory' && e.kind !== 'iteration') || !inRange(e.iteration)) continue;
    const bucket = buckets.get(e.iteration) ?? { train: [], val: [] };
    if (e.kind === 'trajectory') {
      buckets.set(e.iteration, bucket);
      (e.split === 'val' ? bucket.val : bucket.train).push(e);
      out.trajectories++;
      const { setup } = await context.get();
      for (const sink of o.sinks ?? []) await sink.write(e, setup);
      continue;
    }
    buckets.delete(e.iteration);
    const { c, setup } = await context.get();
    const check = checkIteration(c, setup, e, bucket);
    out.iterations.push(check);
    o.onIteration?.(check);
  }
  out.unfinished = [...buckets.keys()].sort((a, b) => a - b);
  return out;
}
