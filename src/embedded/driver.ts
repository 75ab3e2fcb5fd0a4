/**
 * The embedded driver: the whole training loop in one process, no services. Events go to Avro
 * container files and checkpoints to local files under `<root>/<run-id>/`. Per iteration the events
 * are appended before the checkpoint, so a crash loses at most the current iteration; a resumed run
 * redoes it deterministically (same seeds, same weights) and replay drops the duplicate events by key.
 * Everything is validated before the first write, and one process writes a run at a time (run-setup.ts).
 * When the Echo-Trap detector fires and onCollapse is stop or fork (collapse-action.ts), that iteration is
 * checkpointed with the decision in its trainer state; then the run ends, or rewinds to a checkpoint
 * before the first warning sign and goes on as a new lineage (a FORKED RunEvent says why and what changed).
 */
import { performance } from 'node:perf_hooks';
import type { RlConfig } from '../rl/config.ts';
import { EchoTrapDetector } from '../rl/echo-trap.ts';
import { type CollapseAction, lineageConfig, observeIteration } from '../rl/collapse-action.ts';
import {
  checkpoint,
  lineageFrom,
  resumeLineage,
  runEvent,
  takeAction,
  type Lineage,
  type RunContext,
} from './lineage.ts';
import { runEnvSpecId } from '../rl/run-env.ts';
import { validatesAt } from '../rl/val-schedule.ts';
import { runIteration } from './iteration.ts';
import { runValidation } from '../rl/stages/validate.ts';
import { type IterationModels } from '../rl/stages/models.ts';
import { openSandbox, toolTurns } from '../rl/tool-use.ts';
import type { TurnGenerator } from '../tools/rollout-hook.ts';
import { closeModels, createModels, loadPretrained, namedModels, startEngineModels } from '../run/models.ts';
import { type CheckpointRef, loadRunCheckpoint, retentionOf, trainerState, type Models } from '../run/checkpoint.ts';
import { type AsyncRollouts, openAsyncRollouts, VersionCheckpoints } from './async-rollouts.ts';
import { behaviourVersion } from '../rl/async-schedule.ts';
import { iterationEvents, trajectoryEvents } from '../run/events.ts';
import type { RunModel, RunText } from '../rl/run-model.ts';
import { type CheckpointSource, openRun, type PreparedRun, prepareRun, type RunStart } from './run-setup.ts';
import { warmStart } from '../run/warm-start.ts';
import { createLocalEventLog, type EventLog } from '../events/index.ts';
import { applyRetention, createLocalCheckpointStore } from '../storage/index.ts';
import { ROOT_LINEAGE } from '../events/lineage.ts';
import { log } from '../log.ts';
import { headlineMetrics } from '../rl/metric-names.ts';
import { episodeSource } from '../gateway/agent-rollout.ts';

export interface IterationReport {
  iteration: number;
  iterations: number;
  metrics: Record<string, number>;
  timingsMs: Record<string, number>;
  warning: string | null;
  /** The lineage that wrote the iteration (a fork starts a new one). */
  lineageId: string;
}

export interface EmbeddedOptions extends RunStart {
  /** Stop after this iteration (for tests that simulate a crash); default: the config's iterations. */
  stopAfter?: number;
  onIteration?: (report: IterationReport) => void;
  /** Aborting finishes the current iteration, checkpoints it and returns. */
  signal?: AbortSignal;
  /** Names this process in the run's lock (default: the kind of start, e.g. "starpo train --resume"). */
  command?: string;
}

export interface EmbeddedResult {
  config: RlConfig;
  /** The last iteration completed and checkpointed (0: the warm-start only). */
  lastIteration: number;
  lineageId: string;
}

const defaultCommand = (o: EmbeddedOptions): string =>
  o.fork ? 'starpo resume' : o.resume ? 'starpo train --resume' : 'starpo train';

/** Validates everything (prepareRun, unless the caller did), then holds the run's lock while it trains. */
export async function trainEmbedded(o: EmbeddedOptions, prepared?: PreparedRun): Promise<EmbeddedResult> {
  prepared ??= await prepareRun(o);
  const lock = await openRun(o, prepared.c, o.command ?? defaultCommand(o));
  try {
    return await trainPrepared(o, prepared);
  } finally {
    await lock.release();
  }
}

async function trainPrepared(o: EmbeddedOptions, { c, run, initFrom }: PreparedRun): Promise<EmbeddedResult> {
  const { tokenizer, modelConfig, assets } = run;
  // An asynchronous run trains in worker threads, so the rollout beside it never waits for the main thread.
  const models: IterationModels =
    c.asyncStaleness > 0 ? await startEngineModels(c, run) : createModels(c, modelConfig, tokenizer);
  await loadPretrained(models, run, c, !(o.resume || o.fork));
  const ctx: RunContext = {
    o,
    c,
    saved: namedModels(models),
    store: createLocalCheckpointStore({ root: o.root }),
    events: createLocalEventLog({ root: o.root }),
    files: { modelConfig, assets },
  };
  const sandbox = openSandbox(c);
  const tools = toolTurns(c, tokenizer, sandbox);
  const versions = new VersionCheckpoints(c);
  let rollouts: AsyncRollouts | null = null;
  try {
    let {
      lineage,
      next,
      pending,
      versions: known,
    } = o.resume || o.fork
      ? await resumeLineage(ctx)
      : { ...(await freshLineage(ctx, initFrom, models, run, sandbox)), pending: null };
    versions.add(...known);
    const last = Math.min(c.iterations, o.stopAfter ?? c.iterations);
    let done = next - 1;
    // A stop or fork still owed stays in the checkpoint when the run halts first (stopAfter, Ctrl-C): resume takes it.
    while (done < (o.stopAfter ?? Infinity) && !o.signal?.aborted) {
      if (pending) {
        const taken = await takeAction(ctx, lineage, pending);
        if (!taken) break;
        ({ lineage, next } = taken);
        versions.add(...taken.versions);
        await rollouts?.close(); // they played for the iterations the fork abandons
        rollouts = null;
        pending = null;
      }
      if (next > last) break;
      rollouts ??= await openAsyncRollouts(
        c,
        run,
        tools,
        { store: ctx.store, runId: o.runId, versions, done: next - 1, actor: models.actor },
        last,
      );
      const lc = lineageConfig(c, lineage.forks);
      pending = await oneIteration(next, lc, { ...models, tools }, run, ctx.events, lineage, o, rollouts);
      // An abort (Ctrl-C) checkpoints the iteration it finished, whatever checkpointEvery says.
      if (next % c.checkpointEvery === 0 || next === last || pending || o.signal?.aborted) {
        versions.add({ lineageId: lineage.ids.lineageId, iteration: next });
        const state = trainerState(next, lineage.echo.toJSON(), lineage.forks, pending, versions.pendingAt(next));
        await checkpoint(ctx, { ...lineage.ids, iteration: next }, state);
        await applyRetention(lineage.retained, o.runId, retentionOf(c));
      }
      done = next++;
    }
    return { config: c, lastIteration: done, lineageId: lineage.ids.lineageId };
  } finally {
    await rollouts?.close();
    await ctx.events.close();
    await sandbox?.close();
    await closeModels(models);
  }
}

/** A new run: warm-start (or --init-from), checkpoint 0, the STARTED event. */
async function freshLineage(
  ctx: RunContext,
  initFrom: CheckpointSource | null,
  models: IterationModels,
  run: RunModel,
  sandbox: ReturnType<typeof openSandbox>,
): Promise<{ lineage: Lineage; next: number; versions: CheckpointRef[] }> {
  const { o, c } = ctx;
  const init = initFrom ? (actor: Models['actor']) => initActorFrom(initFrom, actor, run.assets) : undefined;
  const sft = await warmStart(c, models, run, sandbox, init);
  if (sft) log.info({ runId: o.runId, ...sft }, 'supervised warm-start done');
  const echo = new EchoTrapDetector();
  const start = { lineageId: ROOT_LINEAGE, parentLineageId: null, fromIteration: 0, forks: 0 };
  const first = { runId: o.runId, lineageId: ROOT_LINEAGE, iteration: 0 };
  await checkpoint(ctx, first, trainerState(0, echo.toJSON(), 0, null));
  await ctx.events.append([runEvent(ctx, start, 'STARTED', null)]);
  return {
    lineage: await lineageFrom(ctx, start, [], [], echo),
    next: 1,
    versions: [{ lineageId: ROOT_LINEAGE, iteration: 0 }],
  };
}

/**
 * Iteration i: its rollout (played here, or taken from the asynchronous rollouts, which then get version i as
 * soon as the update wrote it), update, validation of the new policy, and its events.
 */
async function oneIteration(
  i: number,
  c: RlConfig,
  models: IterationModels & { tools?: TurnGenerator },
  text: RunText,
  events: EventLog,
  lineage: Lineage,
  o: EmbeddedOptions,
  rollouts: AsyncRollouts | null,
): Promise<CollapseAction | null> {
  const { ids, echo } = lineage;
  const startedAt = new Date();
  const episodes = episodeSource(c, models.actor, text, models.tools);
  const result = await runIteration(c, i, models, episodes, rollouts ? () => rollouts.take(i) : undefined);
  if (rollouts) {
    rollouts.publish(i, await models.actor.getState(false));
    result.timingsMs.rollout_play = rollouts.playedMs.get(i) ?? 0;
    rollouts.playedMs.delete(i);
  }
  const t0 = performance.now();
  const val = validatesAt(c, i) ? await runValidation(c, episodes, c.valSamples) : null;
  if (val) result.timingsMs.validate = performance.now() - t0;
  const metrics = { ...result.metrics, ...val?.metrics };
  const { warning, collapse } = observeIteration(c, echo, lineage.forks, i, metrics);
  // The checkpoints whose weights played: the schedule's version for training, the new policy i for validation.
  await events.append([
    ...trajectoryEvents(ids, i, behaviourVersion(c.asyncStaleness, i), result.trajectories, 'train', startedAt),
    ...(val ? trajectoryEvents(ids, i, i, val.trajectories, 'val', startedAt) : []),
    ...iterationEvents(c, ids, {
      iteration: i,
      metrics,
      timingsMs: result.timingsMs,
      startedAt,
      collapse: result.collapse,
      warning,
    }),
  ]);
  log.info(
    {
      runId: ids.runId,
      lineageId: ids.lineageId,
      iteration: i,
      envSpecId: runEnvSpecId(c),
      ...headlineMetrics(metrics),
      ms: Math.round(Object.values(result.timingsMs).reduce((a, b) => a + b, 0)),
    },
    'iteration',
  );
  if (warning) log.warn({ iteration: i, evidence: warning.evidence }, `echo trap: ${warning.message}`);
  o.onIteration?.({
    iteration: i,
    iterations: c.iterations,
    metrics,
    timingsMs: result.timingsMs,
    warning: warning?.message ?? null,
    lineageId: ids.lineageId,
  });
  return collapse;
}

/** Loads the actor of another run's checkpoint into `actor` (critic and optimizer state are not taken). */
async function initActorFrom(
  from: CheckpointSource,
  actor: Models['actor'],
  assets: RunModel['assets'],
): Promise<Record<string, number>> {
  await loadRunCheckpoint(createLocalCheckpointStore({ root: from.root }), from.id, { actor }, assets);
  log.info({ initFrom: from.id }, 'actor initialised from a checkpoint');
  return { 'init/iteration': from.id.iteration };
}
