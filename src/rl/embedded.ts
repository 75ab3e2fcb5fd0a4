/**
 * The embedded driver: the whole training loop in one process, no services. Events go to Avro
 * container files and checkpoints to local files under `<root>/<run-id>/`. Per iteration the events
 * are appended before the checkpoint, so a crash loses at most the current iteration; a resumed run
 * redoes it deterministically (same seeds, same weights) and replay drops the duplicate events by key.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { canonicalConfigJSON, configFromJSON, type RlConfig } from './config.ts';
import { EchoTrapDetector } from './echo-trap.ts';
import { runIteration, runValidation, type IterationModels } from './iteration.ts';
import { openSandbox, toolTurns } from './tool-use.ts';
import type { TurnGenerator } from '../tools/rollout-hook.ts';
import { checkEmbeddedProvider, closeModels, createModels, loadPretrained } from './models.ts';
import { loadRunCheckpoint, saveRunCheckpoint, type Models } from './run-checkpoint.ts';
import { checkpointEvent, iterationEvent, trajectoryEvents, warningEvent } from './run-events.ts';
import { type RunModel, type RunText, resolveRunModel } from './run-model.ts';
import { sftWarmup } from './sft.ts';
import { ConfigError } from '../errors.ts';
import { createLocalEventLog, createLocalEventReader, type EventLog } from '../events/index.ts';
import { applyRetention, createLocalCheckpointStore, type CheckpointStore } from '../storage/index.ts';
import { continuePlan, forkPlan, readLineageStarts, ROOT_LINEAGE, withoutForkPoints, type ResumePlan } from '../replay/lineage.ts';
import { log } from '../log.ts';
import { chooseCheckpoint, parseCheckpointRef } from '../replay/checkpoint-ref.ts';
import { readRunConfig } from '../replay/location.ts';

export interface IterationReport {
  iteration: number;
  iterations: number;
  metrics: Record<string, number>;
  timingsMs: Record<string, number>;
  warning: string | null;
}

export interface EmbeddedOptions {
  root: string;
  runId: string;
  /** New run: the resolved config. Resume: omitted (read from the run directory). */
  config?: RlConfig;
  resume?: boolean;
  /** Stop after this iteration (for tests that simulate a crash); default: the config's iterations. */
  stopAfter?: number;
  onIteration?: (report: IterationReport) => void;
  signal?: AbortSignal;
  /** Start a NEW lineage from checkpoint `fromIteration` of the surviving history (implies resume; see replay/lineage.ts). */
  fork?: { fromIteration: number };
  /**
   * New run only: start the actor from another run's checkpoint ("<run-dir>[@iteration]", e.g. a `starpo sft`
   * run) instead of this config's warm-start; its model settings must match. The critic starts fresh.
   */
  initFrom?: string;
}

/** Continue the surviving lineage, or fork a new one, from what the run's log and checkpoints hold. */
async function planResume(o: EmbeddedOptions, store: CheckpointStore): Promise<ResumePlan> {
  const reader = createLocalEventReader({ root: o.root });
  const starts = await readLineageStarts(reader, o.runId).finally(() => reader.close());
  const checkpoints = await store.list(o.runId);
  return o.fork ? forkPlan(o.runId, starts, checkpoints, o.fork.fromIteration) : continuePlan(o.runId, starts, checkpoints);
}

async function loadOrWriteConfig(o: EmbeddedOptions): Promise<{ c: RlConfig; run: RunModel }> {
  const path = join(o.root, o.runId, 'config.json');
  if (o.resume || o.fork) {
    const c = configFromJSON(await readFile(path, 'utf8'));
    await checkEmbeddedProvider(c);
    return { c, run: await resolveRunModel(c) };
  }
  if (!o.config) throw new ConfigError('config', 'a new run needs a config');
  await checkEmbeddedProvider(o.config); // a provider this machine lacks fails before the run directory exists
  const run = await resolveRunModel(o.config); // so does a bad model directory
  await mkdir(join(o.root, o.runId), { recursive: true });
  await writeFile(path, `${canonicalConfigJSON(o.config)}\n`, { flag: 'wx' }).catch((err: NodeJS.ErrnoException) => {
    throw err.code === 'EEXIST' ? new ConfigError('runId', `run ${o.runId} already exists in ${o.root}; use --resume`) : err;
  });
  return { c: o.config, run };
}

export async function trainEmbedded(o: EmbeddedOptions): Promise<{ config: RlConfig; lastIteration: number; lineageId: string }> {
  const { c, run } = await loadOrWriteConfig(o);
  const { tokenizer, modelConfig, assets } = run;
  const models = createModels(c, modelConfig, tokenizer);
  await loadPretrained(models, run, c, !(o.resume || o.fork));
  const saved: Models = { actor: models.actor, ...(models.critic && { critic: models.critic }), ...(models.ref && { ref: models.ref }) };
  const store = createLocalCheckpointStore({ root: o.root });
  const events = createLocalEventLog({ root: o.root });
  const sandbox = openSandbox(c);
  const tools = toolTurns(c, tokenizer, sandbox);
  let ids = { runId: o.runId, lineageId: ROOT_LINEAGE };
  let plan: ResumePlan | null = null;
  let echo = new EchoTrapDetector();
  let start = 1;
  try {
    if (o.resume || o.fork) {
      plan = await planResume(o, store);
      ids = { runId: o.runId, lineageId: plan.lineageId };
      const state = await loadRunCheckpoint(store, plan.from, saved, assets);
      echo = EchoTrapDetector.fromJSON(state.echoTrap as Parameters<typeof EchoTrapDetector.fromJSON>[0]);
      start = state.iteration + 1;
      log.info({ runId: o.runId, from: plan.from, lineageId: plan.lineageId }, 'resumed from checkpoint');
    } else {
      const sft = o.initFrom ? await initActorFrom(o.initFrom, c, models.actor, assets) : await sftWarmup(c, models.actor, run, sandbox);
      // The warm-start's compiled programs are never run again; their onnxruntime arenas held ~0.9 GB
      // after 150 Sokoban steps (measured), memory RL needs.
      await models.actor.releasePrograms();
      if (c.sftSteps > 0 || o.initFrom) {
        // RL starts with fresh optimizer moments, and the KL reference is the warm-started policy.
        models.actor.setMoments(null, 0);
        models.ref?.setParams(models.actor.getParams());
        log.info({ runId: o.runId, ...sft }, 'supervised warm-start done');
      }
      await checkpoint(store, events, { ...ids, iteration: 0 }, saved, { modelConfig, assets }, echo);
    }
    await events.append([{ kind: 'run', ...ids, action: plan ? 'RESUMED' : 'STARTED', parentLineageId: plan?.parentLineageId ?? null,
      fromIteration: start - 1, configJson: canonicalConfigJSON(c), at: new Date() }]);
    const retained = withoutForkPoints(store, plan?.forkPoints ?? []);
    const last = Math.min(c.iterations, o.stopAfter ?? c.iterations);
    for (let i = start; i <= last && !o.signal?.aborted; i++) {
      await oneIteration(i, c, { ...models, tools }, run, events, echo, ids, o);
      if (i % c.checkpointEvery === 0 || i === last) {
        await checkpoint(store, events, { ...ids, iteration: i }, saved, { modelConfig, assets }, echo);
        await applyRetention(retained, o.runId, { keepLast: c.keepLastCheckpoints, keepEvery: c.keepEveryCheckpoint });
      }
    }
    return { config: c, lastIteration: last, lineageId: ids.lineageId };
  } finally {
    await events.close();
    await sandbox?.close();
    await closeModels(models);
  }
}

async function oneIteration(i: number, c: RlConfig, models: IterationModels & { tools?: TurnGenerator }, text: RunText,
  events: EventLog, echo: EchoTrapDetector, ids: { runId: string; lineageId: string }, o: EmbeddedOptions): Promise<void> {
  const startedAt = new Date();
  const result = await runIteration(c, i, models, text, models.tools);
  const validate = i === c.iterations || (c.valEvery > 0 && i % c.valEvery === 0);
  const val = validate ? await runValidation(c, models.actor, text, c.valSamples, models.tools) : null;
  const metrics = { ...result.metrics, ...val?.metrics };
  const warning = echo.observe({
    iteration: i, inGroupRewardStd: metrics['in_group_std/all'] ?? 0, entropy: metrics['entropy/mean'] ?? 0,
    gradNorm: metrics['actor/grad_norm'] ?? 0, successRate: metrics.success_rate ?? 0,
  });
  const policyVersion = i - 1;
  await events.append([
    ...trajectoryEvents(ids, i, policyVersion, result.trajectories, 'train', startedAt),
    ...(val ? trajectoryEvents(ids, i, policyVersion, val.trajectories, 'val', startedAt) : []),
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

/** The model settings two runs must share for one's weights to start the other. */
const MODEL_FIELDS = [
  'model', 'modelLayers', 'modelHidden', 'modelHeads', 'modelKvHeads', 'modelFfn', 'modelContext', 'template', 'chatThinking',
  'loraRank', 'loraAlpha', 'loraTargets',
] as const;

/** Loads the actor of checkpoint `ref` into `actor` (critic and optimizer state are not taken). */
async function initActorFrom(ref: string, c: RlConfig, actor: Models['actor'], assets: RunModel['assets']): Promise<Record<string, number>> {
  const loc = parseCheckpointRef(ref);
  const source = await readRunConfig(loc);
  const differ = MODEL_FIELDS.filter((k) => source[k] !== c[k]);
  if (differ.length > 0) {
    const what = differ.map((k) => `${k} ${String(source[k])} there, ${String(c[k])} here`).join('; ');
    throw new ConfigError('--init-from', `${ref}: the model differs (${what})`);
  }
  const store = createLocalCheckpointStore({ root: loc.root });
  const id = await chooseCheckpoint(loc, await store.list(loc.runId), loc.iteration);
  await loadRunCheckpoint(store, id, { actor }, assets);
  log.info({ initFrom: id }, 'actor initialised from a checkpoint');
  return { 'init/iteration': id.iteration };
}

/** The run's fixed pieces a checkpoint writes beside the weights. */
type RunFiles = Pick<RunModel, 'modelConfig' | 'assets'>;

async function checkpoint(store: CheckpointStore, events: EventLog, id: { runId: string; lineageId: string; iteration: number },
  models: Models, files: RunFiles, echo: EchoTrapDetector): Promise<void> {
  const saved = await saveRunCheckpoint(store, id, models, files.modelConfig, files.assets,
    { iteration: id.iteration, echoTrap: echo.toJSON() });
  await events.append([checkpointEvent(saved)]);
}
