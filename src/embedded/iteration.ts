/**
 * One training iteration of the embedded driver as a chain of stages (src/rl/stages/) — rollout → reward → filter →
 * score → advantage → update — each timed separately. The durable driver runs the same stages as Temporal
 * activities. Only the rows the filter keeps are scored: metrics over every row (entropy) come from the rollout's
 * own outputs.
 */
import { performance } from 'node:perf_hooks';
import { assemble } from '../rl/assemble.ts';
import { rowsOfGroups } from '../rl/batch.ts';
import type { RlConfig } from '../rl/config.ts';
import { placeRewards } from '../rl/reward.ts';
import type { Trajectory } from '../rl/rollout.ts';
import { keepRows, updateInputOf } from '../rl/kept-rows.ts';
import type { EpisodeSource } from '../rl/episode-source.ts';
import type { CollapseProbe } from '../rl/collapse-metrics.ts';
import { collapseDue } from '../rl/collapse-probe.ts';
import type { IterationModels } from '../rl/stages/models.ts';
import { sampleGroups, type SampledGroups } from '../rl/stages/rollout.ts';
import { collapseStage, scoreStage } from '../rl/stages/score.ts';
import { filterStage } from '../rl/stages/filter.ts';
import { advantagesAndMetrics } from '../rl/stages/advantage.ts';
import { updateKeptRows } from '../rl/stages/update.ts';
import type { StageName } from '../rl/stages/names.ts';

export interface IterationResult {
  trajectories: Trajectory[];
  metrics: Record<string, number>;
  timingsMs: Record<string, number>;
  /** RAGEN-2's collapse probe (recorded in the IterationEvent); null when not due. */
  collapse: CollapseProbe | null;
}

class Stopwatch {
  readonly ms: Partial<Record<StageName, number>> = {};
  async time<T>(stage: StageName, fn: () => Promise<T> | T): Promise<T> {
    const t0 = performance.now();
    try {
      return await fn();
    } finally {
      this.ms[stage] = (this.ms[stage] ?? 0) + performance.now() - t0;
    }
  }
}

/**
 * Rollout (or, for an asynchronous run, waiting for the rollout `played` gives: an older policy's, already
 * under way), then reward → filter → score → advantage → update with the models' current weights.
 */
export async function runIteration(
  c: RlConfig,
  iteration: number,
  models: IterationModels,
  episodes: EpisodeSource,
  played?: () => Promise<SampledGroups>,
): Promise<IterationResult> {
  const clock = new Stopwatch();
  const sampled = await clock.time('rollout', () => played?.() ?? sampleGroups(c, iteration, episodes));
  const { trajectories } = sampled;
  const all = assemble(trajectories);
  const collapse = collapseDue(c, iteration)
    ? await clock.time('collapse', () => collapseStage(c, iteration, trajectories, models.actor))
    : null;
  const { tokenRewards } = await clock.time('reward', () =>
    placeRewards({ batch: all.batch, placement: c.rewardPlacement }),
  );
  const filtered = await clock.time('filter', () => filterStage(c, all.batch, sampled.informative));
  const kept = keepRows(all, rowsOfGroups(all.batch.trajectories, filtered.keptGroupIds));
  const scored = await clock.time('score', () => scoreStage(c, all, kept.rows, models));
  const { adv, metrics } = await clock.time('advantage', () =>
    advantagesAndMetrics(c, iteration, {
      trajectories,
      all,
      kept,
      tokenRewards,
      scored,
      filtered,
      samplingMetrics: sampled.metrics,
      collapse,
    }),
  );
  const train =
    kept.rows.length === 0
      ? {}
      : await clock.time('update', () => updateKeptRows(c, iteration, updateInputOf(kept, scored, adv), models));
  return { trajectories, metrics: { ...metrics, ...train }, timingsMs: clock.ms, collapse };
}
