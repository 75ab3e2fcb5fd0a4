/**
 * A run's checkpoint, the one codec of both drivers: every model (actor, critic, frozen reference; in-process
 * or engines alike) saved with io/checkpoint.ts into a scratch directory, then pushed to the checkpoint store
 * as flat files `<model>.<file>` plus `trainer.json` (iteration, echo-trap state). The store writes its
 * manifest last and verifies every hash on load, so a half-written or damaged checkpoint is never resumed from.
 * Each byte is hashed once a save and once a load: the model's manifest digests go to the store with the files,
 * and the digests the store verified spare the model's own check a second pass (scripts/bench-checkpoint.ts).
 *
 * The frozen reference model never changes, so a run stores it once, in its first checkpoint (the root lineage's
 * iteration 0, which retention keeps while the run has one: `referenceCheckpoint`); later checkpoints leave it out
 * and loading one reads the reference from there. A full SmolLM2 checkpoint is 0.54 GB smaller for it. A checkpoint
 * that carries its own reference files (written before this rule, or where iteration 0 holds none) is read as is.
 */
import { mkdtemp, mkdir, readdir, readFile, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadCheckpoint } from '../policy/io/checkpoint.ts';
import type { ModelConfig } from '../policy/io/config.ts';
import type { PolicyState } from '../policy/engine/state.ts';
import type { PolicyHandle } from '../policy/engine/handle.ts';
import {
  CheckpointNotFoundError,
  type CheckpointFileInput,
  type CheckpointId,
  type CheckpointManifest,
  type CheckpointStore,
  type RetentionPolicy,
  type SavedCheckpoint,
} from '../storage/index.ts';
import { hasReferenceModel, type RlConfig } from '../rl/config.ts';
import { ConfigError, CorruptDataError } from '../errors.ts';
import { BASE_MODEL_FILE } from '../rl/run-model.ts';
import { ROOT_LINEAGE } from '../events/lineage.ts';
import type { CollapseAction } from '../rl/collapse-action.ts';
import { EchoTrapDetector } from '../rl/echo-trap.ts';

export type ModelName = 'actor' | 'critic' | 'ref';
/** In-process Policies or PolicyEngines (durable workers, an asynchronous embedded run's trainer): same files. */
export type Models = Partial<Record<ModelName, PolicyHandle>>;

/** Where a checkpoint lives within a run. */
export interface CheckpointRef {
  lineageId: string;
  iteration: number;
}

/** Trainer state beside the weights: enough to continue exactly where the run stopped. */
export interface TrainerState {
  iteration: number;
  echoTrap: unknown;
  /** onCollapse=fork forks behind the lineage that wrote it (absent = 0). */
  forks?: number;
  /** The stop or fork the detector's warning at this iteration calls for, not yet taken (collapse-action.ts). */
  collapse?: CollapseAction;
  /**
   * asyncStaleness ≥ 1: the checkpoints holding the older policy versions the next rollouts play with
   * (async-schedule.ts pendingVersions), oldest first; absent when there are none.
   */
  behaviourPolicies?: CheckpointRef[];
}

/** The trainer state both drivers write; fields that are 0 or absent stay out, so other runs' bytes do not change. */
export function trainerState(
  iteration: number,
  echoTrap: unknown,
  forks: number,
  collapse: CollapseAction | null,
  behaviourPolicies?: readonly CheckpointRef[],
): TrainerState {
  return {
    iteration,
    echoTrap,
    ...(forks > 0 ? { forks } : {}),
    ...(collapse ? { collapse } : {}),
    ...(behaviourPolicies?.length ? { behaviourPolicies: [...behaviourPolicies] } : {}),
  };
}

/** Which checkpoints a run keeps (applyRetention after each one is written). */
export const retentionOf = (c: RlConfig): RetentionPolicy => ({
  keepLast: c.keepLastCheckpoints,
  keepEvery: c.keepEveryCheckpoint,
});

/** The Echo-Trap detector as a checkpoint's trainer state left it. */
export const detectorOf = (state: TrainerState): EchoTrapDetector =>
  EchoTrapDetector.fromJSON(state.echoTrap as Parameters<typeof EchoTrapDetector.fromJSON>[0]);

/** Runs `fn` with a fresh scratch directory that is removed afterwards, whatever happens. */
export async function withScratch<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'starpo-ckpt-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Where a run keeps its frozen reference model: its first checkpoint (see the module comment). */
export const referenceCheckpoint = (runId: string): CheckpointId => ({ runId, lineageId: ROOT_LINEAGE, iteration: 0 });

/** What retention must keep for the reference model: the reference checkpoint, while the run has one. */
export const keptForReference = (c: RlConfig, runId: string): CheckpointId[] =>
  hasReferenceModel(c) ? [referenceCheckpoint(runId)] : [];

const isReferenceCheckpoint = (id: CheckpointId): boolean =>
  id.lineageId === ROOT_LINEAGE && id.iteration === referenceCheckpoint(id.runId).iteration;

/** Whether a manifest lists files of model `name`. */
const holdsModel = (files: readonly { name: string }[], name: ModelName): boolean =>
  files.some((f) => f.name.startsWith(`${name}.`));

/** Whether the run's reference checkpoint exists and holds the reference model's files. */
async function referenceStored(store: CheckpointStore, runId: string): Promise<boolean> {
  const manifest = await committedManifest(store, referenceCheckpoint(runId));
  return manifest !== undefined && holdsModel(manifest.files, 'ref');
}

/**
 * Saves every model's state (the reference model without optimizer moments, and only where the run's reference
 * checkpoint does not already hold it; one model at a time) and the trainer state. `assets`: the tokenizer files
 * (and chat template, generation config) saved beside the actor's weights.
 */
export async function saveRunCheckpoint(
  store: CheckpointStore,
  ids: CheckpointId,
  models: Models,
  config: ModelConfig,
  assets: Readonly<Record<string, string>>,
  state: TrainerState,
): Promise<SavedCheckpoint> {
  const withRef =
    models.ref !== undefined && (isReferenceCheckpoint(ids) || !(await referenceStored(store, ids.runId)));
  return withScratch(async (dir) => {
    const files: CheckpointFileInput[] = [];
    for (const [name, policy] of Object.entries(models) as [ModelName, PolicyHandle][]) {
      if (name === 'ref' && !withRef) continue;
      const modelDir = join(dir, name);
      const extras = { config, rng: {}, tokenizerFiles: name === 'actor' ? assets : {} };
      const digests = await policy.saveCheckpoint(modelDir, extras, name !== 'ref');
      // The scratch directory is removed afterwards: the store may move these files rather than copy them. Their
      // digests are known (the model's manifest lists them), so the store does not hash a gigabyte again.
      for (const f of await readdir(modelDir))
        files.push({ name: `${name}.${f}`, path: join(modelDir, f), disposable: true, sha256: digests.get(f) });
    }
    const bytes = new TextEncoder().encode(JSON.stringify(state));
    return store.save(ids.runId, ids.lineageId, ids.iteration, [...files, { name: 'trainer.json', bytes }]);
  });
}

/**
 * Checks the files a checkpoint carries beside the actor against the run's (`expected`): a tokenizer,
 * template or LoRA base that changed since the checkpoint was written would silently train something else.
 * The LoRA base is its weights' fingerprint: where the directory lies (a moved checkout, another cache) is not the
 * model, so its path may differ.
 */
export function checkAssets(saved: Readonly<Record<string, string>>, expected: Readonly<Record<string, string>>): void {
  for (const [name, text] of Object.entries(saved)) {
    const want = expected[name];
    if (want === undefined || want === text) continue;
    const sha = name === BASE_MODEL_FILE ? baseWeights(want) : undefined;
    if (sha !== undefined && sha === baseWeights(text)) continue;
    throw new ConfigError(
      'model',
      name === BASE_MODEL_FILE
        ? `the LoRA base's weights differ from those the checkpoint was trained on (${name}: sha256 ` +
            `${baseWeights(text)} then, ${baseWeights(want)} now)`
        : `${name} differs from the one the checkpoint was written with (the model directory changed since)`,
    );
  }
}

/** The weights' sha256 a base_model.json names (undefined when it names none). */
function baseWeights(json: string): string | undefined {
  try {
    const sha = (JSON.parse(json) as { sha256?: unknown }).sha256;
    return typeof sha === 'string' ? sha : undefined;
  } catch {
    return undefined; // damaged: never equal to a fingerprint, so the check refuses it
  }
}

/**
 * Loads a verified checkpoint into the given models (only their files are read: a rollout worker never
 * downloads the critic) and returns the trainer state. `expectedAssets`: the run's files (RunModel.assets)
 * the actor's saved ones must equal.
 */
export async function loadRunCheckpoint(
  store: CheckpointStore,
  ids: CheckpointId,
  models: Models,
  expectedAssets?: Readonly<Record<string, string>>,
): Promise<TrainerState> {
  const named = Object.entries(models) as [ModelName, PolicyHandle][];
  return readCheckpoint(
    store,
    ids,
    named.map(([name]) => name),
    expectedAssets,
    async (name, ckpt) => {
      const policy = named.find(([n]) => n === name)![1];
      await policy.setState(
        { weights: ckpt.weights, optimizer: ckpt.optimizer, step: ckpt.step },
        { allowMissing: [] },
      );
    },
  );
}

/** The actor's weights of a checkpoint (only its files are read), for a rollout engine: no optimizer state. */
export async function loadActorState(
  store: CheckpointStore,
  ids: CheckpointId,
  expectedAssets?: Readonly<Record<string, string>>,
): Promise<PolicyState> {
  let state: PolicyState | null = null;
  await readCheckpoint(store, ids, ['actor'], expectedAssets, async (_, ckpt) => {
    state = { weights: ckpt.weights, optimizer: null, step: ckpt.step };
  });
  return state!;
}

/**
 * Downloads the files of the `names` models and trainer.json (each verified against the manifest's hash), hands
 * each model's checkpoint to `use` in turn, and returns the trainer state.
 */
async function readCheckpoint(
  store: CheckpointStore,
  ids: CheckpointId,
  names: readonly ModelName[],
  expectedAssets: Readonly<Record<string, string>> | undefined,
  use: (name: ModelName, ckpt: Awaited<ReturnType<typeof loadCheckpoint>>) => Promise<void>,
): Promise<TrainerState> {
  const { manifest } = await store.load(ids.runId, ids.lineageId, ids.iteration, { only: [] });
  // A reference model left out here is kept in the run's reference checkpoint (the module comment).
  const elsewhere = names.includes('ref') && !holdsModel(manifest.files, 'ref') && !isReferenceCheckpoint(ids);
  const here = elsewhere ? names.filter((n) => n !== 'ref') : names;
  const only = manifest.files
    .map((f) => f.name)
    .filter((f) => f === 'trainer.json' || here.some((n) => f.startsWith(`${n}.`)));
  const trainer = await withScratch(async (dir) => {
    const flat = join(dir, 'flat');
    // The store checks every file it hands over against its manifest: the model's own check need not hash it again.
    const loaded = await store.load(ids.runId, ids.lineageId, ids.iteration, { toDirectory: flat, only });
    for (const name of here) {
      const verified = new Map(
        loaded.files.filter((f) => f.name.startsWith(`${name}.`)).map((f) => [f.name.slice(name.length + 1), f.sha256]),
      );
      const ckpt = await loadCheckpoint(await modelDirectory(flat, dir, name), verified);
      if (expectedAssets) checkAssets(ckpt.tokenizerFiles, expectedAssets);
      await use(name, ckpt);
    }
    return JSON.parse(await readFile(join(flat, 'trainer.json'), 'utf8')) as TrainerState;
  });
  if (elsewhere) await readReference(store, ids, use);
  return trainer;
}

/** Loads the reference model that checkpoint `ids` left out from the run's reference checkpoint. */
async function readReference(
  store: CheckpointStore,
  ids: CheckpointId,
  use: (name: ModelName, ckpt: Awaited<ReturnType<typeof loadCheckpoint>>) => Promise<void>,
): Promise<void> {
  const at = referenceCheckpoint(ids.runId);
  const missing = (why: string) =>
    new CorruptDataError(
      `checkpoint ${ids.lineageId}@${ids.iteration} of run ${ids.runId} keeps its reference model in the run's ` +
        `checkpoint ${at.lineageId}@${at.iteration}, which ${why}`,
      { details: { ...ids } },
    );
  const manifest = await committedManifest(store, at);
  if (!manifest) throw missing('is missing');
  if (!holdsModel(manifest.files, 'ref')) throw missing('holds no reference model');
  await readCheckpoint(store, at, ['ref'], undefined, use);
}

/**
 * Moves the files `<name>.<file>` of a loaded checkpoint (in `flat`) into
 * `<dir>/<name>/<file>`; returns that directory.
 */
async function modelDirectory(flat: string, dir: string, name: ModelName): Promise<string> {
  const modelDir = join(dir, name);
  await mkdir(modelDir);
  for (const f of await readdir(flat))
    if (f.startsWith(`${name}.`)) await rename(join(flat, f), join(modelDir, f.slice(name.length + 1)));
  return modelDir;
}

/**
 * The older policy versions checkpoint `from` names for its next rollouts (asynchronous runs; none on-policy).
 * Each must still exist: retention or a fork from far back may have deleted one, which is said here, before
 * the run starts, in both drivers.
 */
export async function behaviourVersions(
  store: CheckpointStore,
  runId: string,
  from: CheckpointRef,
  state: Pick<TrainerState, 'behaviourPolicies'> | null,
): Promise<CheckpointRef[]> {
  const versions = state?.behaviourPolicies ?? [];
  for (const v of versions) {
    if (!(await checkpointExists(store, { runId, ...v }))) {
      throw new ConfigError(
        'fromIteration',
        `checkpoint ${from.lineageId}@${from.iteration} needs policy version ` +
          `${v.lineageId}@${v.iteration} for its next rollouts (asyncStaleness), and retention deleted it`,
      );
    }
  }
  return versions;
}

/** Whether the checkpoint is committed (its manifest is visible); store failures propagate. */
export async function checkpointExists(store: CheckpointStore, id: CheckpointId): Promise<boolean> {
  return (await committedManifest(store, id)) !== undefined;
}

/** The checkpoint's manifest, or undefined when it is not committed; store failures propagate. */
async function committedManifest(store: CheckpointStore, id: CheckpointId): Promise<CheckpointManifest | undefined> {
  try {
    return (await store.load(id.runId, id.lineageId, id.iteration, { only: [] })).manifest;
  } catch (err) {
    if (err instanceof CheckpointNotFoundError) return undefined;
    throw err;
  }
}
