/**
 * The embedded driver: the whole training loop in one process, no services. Events go to Avro
 * container files and checkpoints to local files under `<root>/<run-id>/`. Per iteration the events
 * are appended before the checkpoint, so a crash loses at most the current iteration; a resumed run
 * redoes it deterministically (same seeds, same weights) and replay drops the duplicate events by key.
 * Everything is validated before the first write, and one process writes a run at a time (run-setup.ts).
 */
import { performance } from 'node:perf_hooks';
import { canonicalConfigJSON, type RlConfig } from './config.ts';
import { EchoTrapDetector } from './echo-trap.ts';
import { runIteration, runValidation, type IterationModels } from './iteration.ts';
import { openSandbox, toolTurns } from './tool-use.ts';
import type { TurnGenerator } from '../tools/rollout-hook.ts';
import { closeModels, createModels, loadPretrained } from './models.ts';
import { type CheckpointRef, loadRunCheckpoint, saveRunCheckpoint, type Models } from './run-checkpoint.ts';
import { type AsyncRollouts, openAsyncRollouts, VersionCheckpoints } from './async-rollouts.ts';
import { behaviourVersion } from './async-schedule.ts';
import { getPolicyState, startEngineModels, startFromWarmStart } from './model-state.ts';
import { checkpointEvent, iterationEvent, trajectoryEvents, warningEvent } from './run-events.ts';
import type { RunModel, RunText } from './run-model.ts';
import { type CheckpointSource, openRun, type PreparedRun, prepareRun, type RunStart } from './run-setup.ts';
import { sftWarmup } from './sft.ts';
import { createLocalEventLog, type EventLog } from '../events/index.ts';
import { applyRetention, createLocalCheckpointStore, type CheckpointStore } from '../storage/index.ts';
import { continuePlan, forkPlan, readLineageStarts, ROOT_LINEAGE, withoutForkPoints, type ResumePlan } from '../replay/lineage.ts';
import { log } from '../log.ts';
import { localRunEvents } from '../replay/location.ts';

export interface IterationReport {
  iteration: number;
  iterations: number;
  metrics: Record<string, number>;
  timingsMs: Record<string, number>;
  warning: string | null;
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

/** Continue the surviving lineage, or fork a new one, from what the run's log and checkpoints hold. */
async function planResume(o: EmbeddedOptions, store: CheckpointStore): Promise<ResumePlan> {
  const reader = localRunEvents(o.root);
  const starts = await readLineageStarts(reader, o.runId).finally(() => reader.close());
  const checkpoints = await store.list(o.runId);
  return o.fork ? forkPlan(o.runId, starts, checkpoints, o.fork.fromIteration) : continuePlan(o.runId, starts, checkpoints);
}

const defaultCommand = (o: EmbeddedOptions): string =>
  (o.fork ? 'starpo resume' : o.resume ? 'starpo train --resume' : 'starpo train');

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
  const models = c.asyncStaleness > 0 ? await startEngineModels(c, run) : createModels(c, modelConfig, tokenizer);
  await loadPretrained(models, run, c, !(o.resume || o.fork));
  const saved: Models = { actor: models.actor, ...(models.critic && { critic: models.critic }), ...(models.ref && { ref: models.ref }) };
  const store = createLocalCheckpointStore({ root: o.root });
  const events = createLocalEventLog({ root: o.root });
  const sandbox = openSandbox(c);
  const tools = toolTurns(c, tokenizer, sandbox);
  let ids = { runId: o.runId, lineageId: ROOT_LINEAGE };
  let plan: ResumePlan | null = null;
  let echo = new EchoTrapDetector();
  let done = 0;
  const versions = new VersionCheckpoints(c);
  let rollouts: AsyncRollouts | null = null;
  try {
    if (o.resume || o.fork) {
      plan = await planResume(o, store);
      ids = { runId: o.runId, lineageId: plan.lineageId };
      const state = await loadRunCheckpoint(store, plan.from, saved, assets);
      echo = EchoTrapDetector.fromJSON(state.echoTrap as Parameters<typeof EchoTrapDetector.fromJSON>[0]);
      done = state.iteration;
      versions.add(...state.behaviourPolicies ?? [], { lineageId: plan.from.lineageId, iteration: done });
      log.info({ runId: o.runId, from: plan.from, lineageId: plan.lineageId }, 'resumed from checkpoint');
    } else {
      const sft = initFrom
        ? await initActorFrom(initFrom, models.actor, assets) : await sftWarmup(c, models.actor, run, sandbox);
      // The warm-start's compiled programs are never run again; their onnxruntime arenas held ~0.9 GB
      // after 150 Sokoban steps (measured), memory RL needs.
      await models.actor.releasePrograms();
      if (c.sftSteps > 0 || initFrom) {
        await startFromWarmStart(models);
        log.info({ runId: o.runId, ...sft }, 'supervised warm-start done');
      }
      await checkpoint(store, events, { ...ids, iteration: 0 }, saved, { modelConfig, assets }, echo);
      versions.add({ lineageId: ids.lineageId, iteration: 0 });
    }
    await events.append([{ kind: 'run', ...ids, action: plan ? 'RESUMED' : 'STARTED', parentLineageId: plan?.parentLineageId ?? null,
      fromIteration: done, configJson: canonicalConfigJSON(c), at: new Date() }]);
    const retained = withoutForkPoints(store, plan?.forkPoints ?? []);
    const last = Math.min(c.iterations, o.stopAfter ?? c.iterations);
    rollouts = await openAsyncRollouts(c, run, tools, { store, runId: o.runId, versions, done, actor: models.actor }, last);
    for (let i = done + 1; i <= last && !o.signal?.aborted; i++) {
      await oneIteration(i, c, { ...models, tools }, run, events, echo, ids, o, rollouts);
      // An abort (Ctrl-C) checkpoints the iteration it finished, whatever checkpointEvery says.
      if (i % c.checkpointEvery === 0 || i === last || o.signal?.aborted) {
        versions.add({ lineageId: ids.lineageId, iteration: i });
        await checkpoint(store, events, { ...ids, iteration: i }, saved, { modelConfig, assets }, echo, versions.pendingAt(i));
        await applyRetention(retained, o.runId, { keepLast: c.keepLastCheckpoints, keepEvery: c.keepEveryCheckpoint });
        done = i;
      }
    }
    return { config: c, lastIteration: done, lineageId: ids.lineageId };
  } finally {
    await rollouts?.close();
    await events.close();
    await sandbox?.close();
    await closeModels(models);
  }
}

/**
 * Iteration i: its rollout (played here, or taken from the asynchronous rollouts, which then get version i as
 * soon as the update wrote it), update, validation of the new policy, and its events.
 */
async function oneIteration(i: number, c: RlConfig, models: IterationModels & { tools?: TurnGenerator }, text: RunText,
  events: EventLog, echo: EchoTrapDetector, ids: { runId: string; lineageId: string }, o: EmbeddedOptions,
  rollouts: AsyncRollouts | null): Promise<void> {
  const startedAt = new Date();
  const result = await runIteration(c, i, models, text, models.tools, rollouts ? () => rollouts.take(i) : undefined);
  if (rollouts) {
    rollouts.publish(i, await getPolicyState(models.actor, false));
    result.timingsMs.rollout_play = rollouts.playedMs.get(i) ?? 0;
    rollouts.playedMs.delete(i);
  }
  const validate = i === c.iterations || (c.valEvery > 0 && i % c.valEvery === 0);
  const t0 = performance.now();
  const val = validate ? await runValidation(c, models.actor, text, c.valSamples, models.tools) : null;
  if (val) result.timingsMs.validate = performance.now() - t0;
  const metrics = { ...result.metrics, ...val?.metrics };
  const warning = echo.observe({
    iteration: i, inGroupRewardStd: metrics['in_group_std/all'] ?? 0, entropy: metrics['entropy/mean'] ?? 0,
    gradNorm: metrics['actor/grad_norm'] ?? 0, successRate: metrics.success_rate ?? 0,
  });
  // The checkpoints whose weights played: the schedule's version for training, the new policy i for validation.
  await events.append([
    ...trajectoryEvents(ids, i, behaviourVersion(c.asyncStaleness, i), result.trajectories, 'train', startedAt),
    ...(val ? trajectoryEvents(ids, i, i, val.trajectories, 'val', startedAt) : []),
    iterationEvent(ids, i, metrics, result.timingsMs, startedAt),
    ...(warning ? [warningEvent(ids, warning)] : []),
  ]);
  log.info({
    runId: ids.runId, iteration: i, success: metrics.success_rate, valSuccess: metrics['val/success_rate'],
    inGroupStd: metrics['in_group_std/all'], entropy: metrics['entropy/mean'], gradNorm: metrics['actor/grad_norm'],
    ms: Math.round(Object.values(result.timingsMs).reduce((a, b) => a + b, 0)),
  }, 'iteration');
  if (warning) log.warn({ iteration: i, evidence: warning.evidence }, `echo trap: ${warning.message}`);
  o.onIteration?.({ iteration: i, iterations: c.iterations, metrics, timingsMs: result.timingsMs, warning: warning?.message ?? null });
}

/** Loads the actor of another run's checkpoint into `actor` (critic and optimizer state are not taken). */
async function initActorFrom(from: CheckpointSource, actor: Models['actor'], assets: RunModel['assets']): Promise<Record<string, number>> {
  await loadRunCheckpoint(createLocalCheckpointStore({ root: from.root }), from.id, { actor }, assets);
  log.info({ initFrom: from.id }, 'actor initialised from a checkpoint');
  return { 'init/iteration': from.id.iteration };
}

/** The run's fixed pieces a checkpoint writes beside the weights. */
type RunFiles = Pick<RunModel, 'modelConfig' | 'assets'>;

async function checkpoint(store: CheckpointStore, events: EventLog, id: { runId: string; lineageId: string; iteration: number },
  models: Models, files: RunFiles, echo: EchoTrapDetector, behaviour?: CheckpointRef[]): Promise<void> {
  const saved = await saveRunCheckpoint(store, id, models, files.modelConfig, files.assets,
    { iteration: id.iteration, echoTrap: echo.toJSON(), ...(behaviour && { behaviourPolicies: behaviour }) });
  await events.append([checkpointEvent(saved)]);
}
