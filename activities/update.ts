/**
 * update (task queue "update", the GPU worker's): critic then actor PPO steps on the kept rows, the
 * Echo-Trap detector's observation, and the new policy written as checkpoint i (weights, optimizer
 * moments, trainer state; manifest last). Its result (metrics, warning, the saved checkpoint) is kept
 * as an artifact after the checkpoint commits: a retry that finds it returns it instead of training
 * again, and one that does not recomputes the same bytes (saving identical content is a no-op).
 */
import { activity, type Beat } from '../src/durable/boundary.ts';
import { unpackArtifact } from '../src/durable/artifact-codec.ts';
import { json, keyOf, parse, policyId, unpackScored } from '../src/durable/batch-io.ts';
import type { HeldModels } from '../src/durable/model-host.ts';
import { fromWire, toWire, type UpdateActivityInput, type UpdateResult } from '../src/durable/protocol.ts';
import type { WorkerResources } from '../src/durable/resources.ts';
import type { RlConfig } from '../src/rl/config.ts';
import { observeIteration } from '../src/rl/collapse-action.ts';
import { detectorOf, saveRunCheckpoint, trainerState } from '../src/run/checkpoint.ts';
import { updateKeptRows } from '../src/rl/stages/update.ts';
import { keepRows, updateInputOf } from '../src/rl/kept-rows.ts';
import type { UpdateInput as StageInput } from '../src/rl/update.ts';
import { resolveRunModel } from '../src/rl/run-model.ts';
import type { SavedCheckpoint } from '../src/storage/index.ts';
import type { Trainer } from '../src/policy/engine/handle.ts';

/** Heartbeat details: optimizer steps done (critic then actor) of those the update takes. */
interface UpdateProgress {
  steps: number;
  of: number;
}

/** What the update leaves behind for the publish activity (and for its own retries). */
export interface UpdateRecord extends UpdateResult {
  saved: SavedCheckpoint;
}

export const updateRecordKey = (input: { run: UpdateActivityInput['run']; iteration: number }): string =>
  keyOf(input, 'update', 'result.json');

/** The update's input: the kept rows (those the advantage stage wrote) with their scores and advantages. */
async function trainRows(r: WorkerResources, input: UpdateActivityInput): Promise<StageInput> {
  const artifacts = r.artifacts(input.run.storeUri);
  const { all } = await r.batch(input.run.storeUri, input.rollout);
  const scored = unpackScored(await artifacts.get(input.scored), input.scored);
  const adv = unpackArtifact(await artifacts.get(input.advantage), input.advantage).arrays;
  const [advantages, returns] = [adv.advantages as Float32Array, adv.returns as Float32Array | undefined];
  return updateInputOf(keepRows(all, Array.from(adv.rows)), scored, { advantages, returns });
}

/**
 * The detector's observation, and the trainer state checkpoint i holds (forks, pending stop or fork, and the
 * checkpoints of the older versions the next rollouts play when asynchronous).
 */
function observeEchoTrap(m: HeldModels, c: RlConfig, input: UpdateActivityInput, metrics: Record<string, number>) {
  const { iteration, behaviourPolicies } = input;
  const forks = input.run.forks ?? 0;
  const echo = detectorOf(m.trainer!);
  const { warning, collapse } = observeIteration(c, echo, forks, iteration, metrics);
  return { trainer: trainerState(iteration, echo.toJSON(), forks, collapse, behaviourPolicies), warning, collapse };
}

/** The model as the update stage sees it, reporting each optimizer step as heartbeat progress. */
function counting(model: Trainer, report: () => void): Trainer {
  return {
    trainStep: async (...args) => {
      const out = await model.trainStep(...args);
      report();
      return out;
    },
  };
}

async function train(
  r: WorkerResources,
  c: RlConfig,
  input: UpdateActivityInput,
  beat: Beat<UpdateProgress>,
): Promise<UpdateRecord> {
  const data = await trainRows(r, input);
  const store = r.store(input.run.storeUri);
  const id = { runId: input.run.runId, lineageId: input.run.lineageId, iteration: input.iteration };
  const run = await resolveRunModel(c);
  return r.trainModels.use(c, store, policyId(input), async (m, session) => {
    session.mutating();
    const progress = {
      steps: 0,
      of: Math.ceil(data.tokens.batch / c.miniBatchSize) * c.ppoEpochs * (m.critic ? 2 : 1),
    };
    const report = () => {
      progress.steps++;
      beat.progress({ ...progress });
    };
    const models = { actor: counting(m.actor, report), critic: m.critic && counting(m.critic, report) };
    const trained = await updateKeptRows(c, input.iteration, data, models);
    const metrics = { ...fromWire(input.metrics), ...trained };
    const { trainer, warning, collapse } = observeEchoTrap(m, c, input, metrics);
    const saved = await saveRunCheckpoint(store.store, id, m.engines, run.modelConfig, run.assets, trainer);
    session.holds(id, trainer);
    const w = warning && { message: warning.message, evidence: toWire(warning.evidence) };
    const checkpoint = { lineageId: id.lineageId, iteration: id.iteration };
    return { checkpoint, metrics: toWire(metrics), warning: w, collapse, saved };
  });
}

export function updateActivity(r: WorkerResources) {
  return activity('update', async (input: UpdateActivityInput, beat: Beat<UpdateProgress>): Promise<UpdateResult> => {
    const artifacts = r.artifacts(input.run.storeUri);
    const key = updateRecordKey(input);
    const record = (await artifacts.has(key))
      ? parse<UpdateRecord>(await artifacts.get(key))
      : await train(r, await r.config(input.run), input, beat);
    await artifacts.put(key, json(record));
    const { saved: _saved, ...result } = record;
    return result;
  });
}
