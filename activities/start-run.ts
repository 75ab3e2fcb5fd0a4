/**
 * startRun: the first activity of a lineage. A new run validates its config (a ConfigError names the
 * field and is not retried), saves it beside the checkpoints, runs the supervised warm-start and writes
 * checkpoint 0. A resumed lineage verifies the checkpoint it continues from (hash-checked on load).
 * Either way it saves the lineage's start (for fork points) and logs its RunEvent (STARTED; RESUMED, or
 * FORKED by onCollapse=fork, with parent, iteration and forks).
 */
import { activity } from '../src/durable/boundary.ts';
import { configKey, lineageKey } from '../src/storage/artifacts.ts';
import { appendExactlyOnce } from '../src/durable/event-fence.ts';
import { json } from '../src/durable/batch-io.ts';
import type { ResumeFrom, RunPlan, RunRef, StartRunInput, StartRunResult } from '../src/durable/protocol.ts';
import { behaviourVersions, checkpointExists, saveRunCheckpoint, trainerState } from '../src/run/checkpoint.ts';
import type { WorkerResources } from '../src/durable/resources.ts';
import { ConfigError } from '../src/errors.ts';
import { canonicalConfigJSON, configFromJSON, type RlConfig } from '../src/rl/config.ts';
import { EchoTrapDetector } from '../src/rl/echo-trap.ts';
import { checkpointEvent, runEvent } from '../src/run/events.ts';
import { warmStart } from '../src/run/warm-start.ts';
import { resolveRunModel } from '../src/rl/run-model.ts';
import type { LineageStart, StarpoEvent } from '../src/events/index.ts';

const planOf = (c: RlConfig): RunPlan => ({
  iterations: c.iterations,
  envGroups: c.envGroups,
  groupSize: c.groupSize,
  valEvery: c.valEvery,
  dynamicSampling: c.dynamicSampling,
  ...(c.asyncStaleness > 0 && { asyncStaleness: c.asyncStaleness }),
});

/** Saves a new run's config once; the same config again is a retry, another one a clash of run ids. */
async function saveConfig(r: WorkerResources, run: RunRef, configJson: string): Promise<RlConfig> {
  const c = configFromJSON(configJson);
  const artifacts = r.artifacts(run.storeUri);
  const key = configKey(run.runId);
  if (await artifacts.has(key)) {
    const existing = canonicalConfigJSON(configFromJSON((await artifacts.get(key)).toString('utf8')));
    if (existing !== canonicalConfigJSON(c))
      throw new ConfigError('runId', `run ${run.runId} already exists with another config`);
  } else {
    await artifacts.put(key, Buffer.from(`${canonicalConfigJSON(c)}\n`));
  }
  return c;
}

const lineageStart = (run: RunRef, resume: ResumeFrom | undefined, forks: number): LineageStart => ({
  lineageId: run.lineageId,
  parentLineageId: resume?.parentLineageId ?? null,
  fromIteration: resume?.fromIteration ?? 0,
  forks,
});

/** Saves the lineage's start where retention and the fork-point activity find it (the log is Kafka's, too far). */
async function saveLineageStart(r: WorkerResources, run: RunRef, start: LineageStart): Promise<void> {
  await r.artifacts(run.storeUri).put(lineageKey(run.runId, run.lineageId), json(start));
}

/** Appends the lineage's RunEvent (and `after`, the events that follow it). */
async function logLineageStart(
  r: WorkerResources,
  run: RunRef,
  c: RlConfig,
  start: LineageStart,
  resume: ResumeFrom | undefined,
  after: StarpoEvent[] = [],
): Promise<void> {
  const action = resume?.fork ? 'FORKED' : resume ? 'RESUMED' : 'STARTED';
  const events = [runEvent(run.runId, c, start, action, resume?.fork?.reason ?? null), ...after];
  await appendExactlyOnce(r, run, start.fromIteration, 'start', events);
}

/**
 * Warm-start (run/warm-start.ts) and checkpoint 0. A retry that finds checkpoint 0 committed loads it instead;
 * saving it again is then a no-op that returns it.
 */
async function freshRun(r: WorkerResources, c: RlConfig, run: RunRef): Promise<void> {
  const store = r.store(run.storeUri);
  const id = { runId: run.runId, lineageId: run.lineageId, iteration: 0 };
  const done = await checkpointExists(store.store, id);
  const model = await resolveRunModel(c);
  const saved = await r.trainModels.use(c, store, done ? id : 'fresh', async (m, session) => {
    const trainer = m.trainer ?? trainerState(0, new EchoTrapDetector().toJSON(), 0, null);
    if (!done) {
      session.mutating();
      await warmStart(c, m, model, r.sandbox(c));
    }
    const out = await saveRunCheckpoint(store.store, id, m.engines, model.modelConfig, model.assets, trainer);
    session.holds(id, trainer);
    return out;
  });
  const start = lineageStart(run, undefined, 0);
  await saveLineageStart(r, run, start);
  await logLineageStart(r, run, c, start, undefined, [checkpointEvent(saved)]);
}

/**
 * A lineage that continues from `resume`'s checkpoint. Its start is saved before that checkpoint is loaded: until
 * the record exists, retention in the parent lineage's publish activity (a zombie attempt, or a parent still
 * running) does not know the checkpoint is a fork point and may delete it under the load. A load that then fails
 * leaves the record behind; it only keeps that checkpoint from retention, and a retry writes the same record.
 */
export async function resumeLineage(r: WorkerResources, run: RunRef, resume: ResumeFrom): Promise<StartRunResult> {
  const c = await r.config(run);
  const parent = { runId: run.runId, lineageId: resume.parentLineageId, iteration: resume.fromIteration };
  // A fork knows its count; a plain resume inherits the parent's, known once its trainer state is loaded.
  const saved = lineageStart(run, resume, resume.fork?.forks ?? 0);
  await saveLineageStart(r, run, saved);
  // Loading verifies every file's hash: a damaged checkpoint fails here (CorruptDataError), not later.
  const trainer = await r.trainModels.use(c, r.store(run.storeUri), parent, async (m) => m.trainer);
  const forks = resume.fork?.forks ?? trainer?.forks ?? 0;
  const start = forks === saved.forks ? saved : lineageStart(run, resume, forks);
  if (start !== saved) await saveLineageStart(r, run, start);
  const policy = { lineageId: parent.lineageId, iteration: parent.iteration };
  const versions = await behaviourVersions(r.store(run.storeUri).store, run.runId, policy, trainer);
  await logLineageStart(r, run, c, start, resume);
  return {
    plan: planOf(c),
    policy,
    nextIteration: parent.iteration + 1,
    forks,
    ...(versions.length > 0 && { versions }),
  };
}

export function startRunActivity(r: WorkerResources) {
  return activity('startRun', async (input: StartRunInput): Promise<StartRunResult> => {
    const { run, resume } = input;
    if (resume) return resumeLineage(r, run, resume);
    if (input.configJson === undefined) throw new ConfigError('configJson', 'a new run needs a config');
    const c = await saveConfig(r, run, input.configJson);
    await freshRun(r, c, run);
    return { plan: planOf(c), policy: { lineageId: run.lineageId, iteration: 0 }, nextIteration: 1, forks: 0 };
  });
}
