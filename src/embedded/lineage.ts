/**
 * The embedded driver's lineages: what the training loop is writing (ids, forks behind it, the Echo-Trap
 * detector, the store view retention sees), how a resumed run finds where to continue, and how a stop or
 * fork that onCollapse calls for is taken (collapse-action.ts): a fork loads the checkpoint before the
 * first warning sign and starts a new lineage with a FORKED RunEvent.
 */
import type { RlConfig } from '../rl/config.ts';
import type { EchoTrapDetector } from '../rl/echo-trap.ts';
import type { CollapseAction } from '../rl/collapse-action.ts';
import { forkPoint } from '../run/fork-point.ts';
import {
  behaviourVersions,
  type CheckpointRef,
  detectorOf,
  keptForReference,
  loadRunCheckpoint,
  saveRunCheckpoint,
  type Models,
  type TrainerState,
} from '../run/checkpoint.ts';
import { checkpointEvent, runEvent as lineageRunEvent } from '../run/events.ts';
import type { RunModel } from '../rl/run-model.ts';
import type { EventLog, LineageStart, RunEvent } from '../events/index.ts';
import type { CheckpointId, CheckpointStore } from '../storage/index.ts';
import { forkLineageId } from '../events/lineage.ts';
import { continuePlan, forkPlan, withoutForkPoints, type ResumePlan } from '../run/resume-plan.ts';
import { checkDamagedResume, readIntactHistory } from '../run/intact-history.ts';
import { localRunEvents } from '../run/location.ts';
import { log } from '../log.ts';
import { join } from 'node:path';

/** Where the run lives and, for `starpo resume --from-iteration`, which checkpoint starts a new lineage. */
export interface LineageOptions {
  root: string;
  runId: string;
  fork?: { fromIteration: number };
  /** Fork from what a damaged log's intact prefix records (src/run/intact-history.ts). */
  allowPartial?: boolean;
}

/** Continue the surviving lineage, or fork a new one, from what the run's log and checkpoints hold. */
async function planResume(
  o: LineageOptions,
  store: CheckpointStore,
): Promise<{
  plan: ResumePlan;
  starts: LineageStart[];
}> {
  const reader = localRunEvents(o.root); // events named by this directory's run id, wherever the run was written
  const history = await readIntactHistory(reader, o.runId).finally(() => reader.close());
  const checkpoints = await store.list(o.runId);
  const { starts, damage } = history;
  const damaged = { dir: join(o.root, o.runId), runId: o.runId, allowPartial: Boolean(o.allowPartial) };
  checkDamagedResume({ ...damaged, fromIteration: o.fork?.fromIteration }, history, checkpoints);
  if (damage) log.warn({ runId: o.runId, damage: damage.where }, 'resuming from the intact prefix of a damaged log');
  const plan = o.fork
    ? forkPlan(o.runId, starts, checkpoints, o.fork.fromIteration)
    : continuePlan(o.runId, starts, checkpoints);
  return { plan, starts };
}

/** The lineage the loop is writing: its ids, forks behind it, detector, and the store view retention sees. */
export interface Lineage {
  ids: { runId: string; lineageId: string };
  forks: number;
  echo: EchoTrapDetector;
  retained: CheckpointStore;
  /** Lineage starts known so far: the log's, then those this process wrote. */
  starts: LineageStart[];
}

/** What every step of the loop needs from the run. */
export interface RunContext {
  o: LineageOptions;
  c: RlConfig;
  store: CheckpointStore;
  events: EventLog;
  saved: Models;
  files: RunFiles;
}

export function runEvent(
  ctx: RunContext,
  start: LineageStart,
  action: RunEvent['action'],
  reason: string | null,
): RunEvent {
  return lineageRunEvent(ctx.o.runId, ctx.c, start, action, reason);
}

export async function lineageFrom(
  ctx: RunContext,
  start: LineageStart,
  forkPoints: CheckpointId[],
  starts: LineageStart[],
  echo: EchoTrapDetector,
): Promise<Lineage> {
  const ids = { runId: ctx.o.runId, lineageId: start.lineageId };
  const retained = withoutForkPoints(ctx.store, [...forkPoints, ...keptForReference(ctx.c, ctx.o.runId)]);
  return { ids, forks: start.forks ?? 0, echo, retained, starts: [...starts, start] };
}

/** The policy versions a loaded checkpoint makes known: the older ones it names (they must exist), and itself. */
async function versionsOf(ctx: RunContext, from: CheckpointId, state: TrainerState): Promise<CheckpointRef[]> {
  const self = { lineageId: from.lineageId, iteration: from.iteration };
  return [...(await behaviourVersions(ctx.store, ctx.o.runId, self, state)), self];
}

/**
 * Resume or fork from the run's own checkpoints; a stop or fork the checkpoint still owes comes back as `pending`,
 * and `versions` are the checkpoints of the policy versions the next rollouts play.
 */
export async function resumeLineage(ctx: RunContext) {
  const { plan, starts } = await planResume(ctx.o, ctx.store);
  const state = await loadRunCheckpoint(ctx.store, plan.from, ctx.saved, ctx.files.assets);
  log.info({ runId: ctx.o.runId, from: plan.from, lineageId: plan.lineageId }, 'resumed from checkpoint');
  const { lineageId, parentLineageId, forks } = plan;
  const start = { lineageId, parentLineageId, fromIteration: state.iteration, forks };
  await ctx.events.append([runEvent(ctx, start, 'RESUMED', null)]);
  const lineage = await lineageFrom(ctx, start, plan.forkPoints, starts, detectorOf(state));
  const pending = ctx.o.fork ? null : (state.collapse ?? null);
  return { lineage, next: state.iteration + 1, pending, versions: await versionsOf(ctx, plan.from, state) };
}

/**
 * Takes a pending stop or fork (collapse-action.ts): null when the run stops here, else the new lineage
 * and the iteration it continues with.
 */
export async function takeAction(
  ctx: RunContext,
  lineage: Lineage,
  action: CollapseAction,
): Promise<{
  lineage: Lineage;
  next: number;
  versions: CheckpointRef[];
} | null> {
  const { runId } = ctx.o;
  if (action.kind === 'stop') {
    log.warn({ runId, iteration: action.iteration }, `run stopped: ${action.reason}`);
    return null;
  }
  const checkpoints = await ctx.store.list(runId);
  const point = forkPoint(lineage.starts, checkpoints, action.before);
  if (!point) {
    log.warn(
      { runId, before: action.before },
      'run stopped: no checkpoint before the first warning sign survived retention',
    );
    return null;
  }
  const lineageId = forkLineageId(action.forks, point.iteration);
  const plan = { ...forkPlan(runId, lineage.starts, checkpoints, point.iteration), lineageId };
  const state = await loadRunCheckpoint(ctx.store, plan.from, ctx.saved, ctx.files.assets);
  const start = {
    lineageId,
    parentLineageId: plan.parentLineageId,
    fromIteration: point.iteration,
    forks: action.forks,
  };
  await ctx.events.append([runEvent(ctx, start, 'FORKED', action.reason)]);
  log.warn({ runId, lineageId: plan.lineageId, from: plan.from, forks: action.forks }, `forked: ${action.reason}`);
  const next = await lineageFrom(ctx, start, plan.forkPoints, lineage.starts, detectorOf(state));
  return { lineage: next, next: point.iteration + 1, versions: await versionsOf(ctx, plan.from, state) };
}

/** The run's fixed pieces a checkpoint writes beside the weights. */
export type RunFiles = Pick<RunModel, 'modelConfig' | 'assets'>;

export async function checkpoint(
  ctx: RunContext,
  id: { runId: string; lineageId: string; iteration: number },
  state: TrainerState,
): Promise<void> {
  const saved = await saveRunCheckpoint(ctx.store, id, ctx.saved, ctx.files.modelConfig, ctx.files.assets, state);
  await ctx.events.append([checkpointEvent(saved)]);
}
