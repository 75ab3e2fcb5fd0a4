/**
 * Event log → RunReport (pure). Events are fed one at a time in replay order, so a caller can stream a
 * long log; trajectories are kept only for a sample of iterations because a full run's (128 per
 * iteration, plus validation) would make the report file hundreds of megabytes. Token logs go into the
 * report for those trajectories only, their text through one table per run (tokens.ts).
 */
import type { CheckpointEvent, StarpoEvent, TrajectoryEvent } from '../events/index.ts';
import type { RlConfig } from '../rl/config.ts';
import type { EnvInfo } from './env-info.ts';
import { withFinalStates } from './final-state.ts';
import type { ForkMark, IterationPoint, RunReport, TrajectoryView, WarningMark } from './model.ts';
import { auditTokens, runTokens, type TokenizerLookup } from './tokens.ts';

export const DEFAULT_TRAJECTORY_ITERATIONS = 12;

/**
 * At most `max` of the iterations, evenly spread, always with the first and the last (where collapse
 * shows). Input need not be sorted; output is ascending.
 */
export function sampleIterations(iterations: readonly number[], max: number): number[] {
  const all = [...new Set(iterations)].sort((a, b) => a - b);
  if (max <= 0) return [];
  if (all.length <= max) return all;
  if (max === 1) return [all[all.length - 1]];
  const picked = new Set<number>();
  for (let k = 0; k < max; k++) picked.add(all[Math.round((k * (all.length - 1)) / (max - 1))]);
  return [...picked].sort((a, b) => a - b);
}

/** The trajectory as shown, without its tokens (added at finish, once the run's stop tokens are known). */
export function trajectoryView(e: TrajectoryEvent): TrajectoryView {
  return {
    iteration: e.iteration,
    split: e.split,
    group: e.group,
    rollout: e.rolloutIndex,
    seed: e.envSeed,
    return: e.trajectoryReturn,
    success: e.success,
    turns: e.turns.map((t) => ({
      observation: t.observation,
      response: t.response,
      actions: t.executedActions,
      envReward: t.envReward,
      formatPenalty: t.formatPenalty,
      toolCalls: t.toolCalls,
    })),
    tokens: null,
  };
}

/** A trajectory held until finish; ids in a typed array, since every iteration's are held until the sample is known. */
interface Held {
  view: TrajectoryView;
  ids: Int32Array;
  roles: string;
}

const carriesTokenizer = (e: CheckpointEvent | undefined) =>
  e?.files.some((f) => f.name === 'actor.tokenizer.json') ?? false;

function* idsOf(held: readonly Held[]): Generator<number> {
  for (const h of held) yield* h.ids;
}

/** Events older than schema v4 have an empty token log: the view then says "no token log". */
function withTokens(h: Held, stopIds: readonly number[] | null): TrajectoryView {
  if (h.roles === '' && h.ids.length === 0) return h.view;
  const ids = Array.from(h.ids);
  return { ...h.view, tokens: { ids, roles: h.roles, audit: auditTokens(ids, h.roles, h.view.turns.length, stopIds) } };
}

const byTrajectoryOrder = (a: TrajectoryView, b: TrajectoryView): number =>
  a.iteration - b.iteration || a.split.localeCompare(b.split) || a.group - b.group || a.rollout - b.rollout;

export interface CollectOptions {
  /** Iterations whose trajectories the report keeps (default DEFAULT_TRAJECTORY_ITERATIONS; 0 = none). */
  trajectoryIterations?: number;
  /** The run's config.json text, used until the log holds a RunEvent (a run that has just started). */
  fallbackConfigJson?: string;
}

export class RunCollector {
  private configJson: string | undefined;
  private readonly points = new Map<number, IterationPoint>();
  private readonly warnings: WarningMark[] = [];
  private readonly forks: ForkMark[] = [];
  private envSpecId = '';
  private readonly trajectories = new Map<number, Held[]>();
  private checkpoint: CheckpointEvent | undefined;

  constructor(
    readonly runId: string,
    private readonly options: CollectOptions = {},
  ) {
    this.configJson = options.fallbackConfigJson;
  }

  add(event: StarpoEvent): void {
    if (event.kind === 'run') {
      this.configJson = event.configJson;
      const { lineageId, parentLineageId, fromIteration, forks } = event;
      if (event.action === 'FORKED')
        this.forks.push({ lineageId, parentLineageId, fromIteration, forks, reason: event.reason ?? '' });
    } else if (event.kind === 'iteration') {
      const point = { iteration: event.iteration, metrics: event.metrics, timingsMs: event.stageTimingsMs };
      this.points.set(event.iteration, point);
      if (event.envSpecId !== '') this.envSpecId = event.envSpecId;
    } else if (event.kind === 'echo-trap') {
      this.warnings.push({ iteration: event.iteration, message: event.message, evidence: event.evidence });
    } else if (event.kind === 'trajectory') {
      const list = this.trajectories.get(event.iteration) ?? [];
      list.push({ view: trajectoryView(event), ids: Int32Array.from(event.tokenIds), roles: event.tokenRoles });
      this.trajectories.set(event.iteration, list);
    } else if (event.kind === 'checkpoint' && !(carriesTokenizer(this.checkpoint) && !carriesTokenizer(event))) {
      this.checkpoint = event;
    }
  }

  /** The log's last checkpoint carrying the actor's tokenizer (in replay order, the surviving lineage's). */
  lastCheckpoint(): CheckpointEvent | undefined {
    return this.checkpoint;
  }

  private keptIterations(): number[] {
    const max = this.options.trajectoryIterations ?? DEFAULT_TRAJECTORY_ITERATIONS;
    return sampleIterations([...this.trajectories.keys()], max);
  }

  private kept(): Held[] {
    return this.keptIterations().flatMap((i) => this.trajectories.get(i)!);
  }

  /** Whether a trajectory the report keeps has a token log (only then is a tokenizer worth loading). */
  needsTokenizer(): boolean {
    return this.kept().some((h) => h.ids.length > 0);
  }

  /** The parsed config ({} until one is known). */
  config(): Partial<RlConfig> {
    return this.configJson ? (JSON.parse(this.configJson) as Partial<RlConfig>) : {};
  }

  /** `tokenizer`: the run's (run-tokenizer.ts); without it, tokens are shown as ids with the lookup's note. */
  finish(env: EnvInfo, tokenizer: TokenizerLookup = { note: 'no tokenizer was looked up' }): RunReport {
    const config = this.config();
    const iterations = [...this.points.values()].sort((a, b) => a.iteration - b.iteration);
    const held = this.kept();
    const stopIds = 'stopIds' in tokenizer ? tokenizer.stopIds : null;
    const views = held.map((h) => withTokens(h, stopIds)).sort(byTrajectoryOrder);
    return {
      runId: this.runId,
      env: typeof config.env === 'string' ? config.env : '',
      envSpecId: this.envSpecId,
      plannedIterations: config.iterations ?? 0,
      lastIteration: iterations.length ? iterations[iterations.length - 1].iteration : 0,
      config: config as Record<string, unknown>,
      iterations,
      warnings: [...this.warnings].sort((a, b) => a.iteration - b.iteration),
      forks: [...this.forks],
      oracle: env.oracle,
      legend: env.legend,
      trajectoryIterations: this.keptIterations(),
      trajectoryIterationsTotal: this.trajectories.size,
      trajectories: withFinalStates(env.env, env.legend.length > 0, views),
      tokens: runTokens(tokenizer, idsOf(held)),
    };
  }
}
