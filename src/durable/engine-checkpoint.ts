/**
 * Run checkpoints to and from policy engines (worker threads). The files are exactly those of
 * rl/run-checkpoint.ts — `<model>.<file>` per model plus `trainer.json` — so the embedded and the
 * durable driver write byte-identical checkpoints for the same state, and either can resume the other's.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { PolicyEngine } from '../policy/engine/engine.ts';
import { loadCheckpoint, saveCheckpoint } from '../policy/io/checkpoint.ts';
import type { ModelConfig } from '../policy/io/config.ts';
import { type ModelName, type TrainerState, checkAssets, modelDirectory, withScratch } from '../rl/run-checkpoint.ts';
import { CheckpointNotFoundError, type CheckpointId, type CheckpointStore, type SavedCheckpoint } from '../storage/index.ts';

export type Engines = Partial<Record<ModelName, PolicyEngine>>;

/** Saves every engine's state (the reference model without optimizer moments) and the trainer state. */
export async function saveEngineCheckpoint(store: CheckpointStore, id: CheckpointId, engines: Engines,
  config: ModelConfig, assets: Readonly<Record<string, string>>, state: TrainerState): Promise<SavedCheckpoint> {
  return withScratch(async (dir) => {
    const named = Object.entries(engines) as [ModelName, PolicyEngine][];
    // each in its thread
    const states = await Promise.all(named.map(([name, engine]) => engine.getState(name !== 'ref')));
    const files: { name: string; path: string }[] = [];
    for (const [k, [name]] of named.entries()) {
      const modelDir = join(dir, name);
      const tokenizerFiles = name === 'actor' ? assets : {};
      await saveCheckpoint(modelDir, { config, ...states[k], rng: {}, tokenizerFiles });
      for (const f of await readdir(modelDir)) files.push({ name: `${name}.${f}`, path: join(modelDir, f) });
    }
    const bytes = new TextEncoder().encode(JSON.stringify(state));
    return store.save(id.runId, id.lineageId, id.iteration, [...files, { name: 'trainer.json', bytes }]);
  });
}

/**
 * Loads the engines' models (only their files: a rollout worker never downloads the critic) from a
 * checkpoint, every file verified against the manifest's hash; returns the trainer state.
 */
export async function loadEngineCheckpoint(store: CheckpointStore, id: CheckpointId, engines: Engines,
  expectedAssets?: Readonly<Record<string, string>>): Promise<TrainerState> {
  const names = Object.keys(engines);
  const { manifest } = await store.load(id.runId, id.lineageId, id.iteration, { only: [] });
  const only = manifest.files.map((f) => f.name)
    .filter((f) => f === 'trainer.json' || names.some((n) => f.startsWith(`${n}.`)));
  return withScratch(async (dir) => {
    const flat = join(dir, 'flat');
    await store.load(id.runId, id.lineageId, id.iteration, { toDirectory: flat, only });
    for (const [name, engine] of Object.entries(engines) as [ModelName, PolicyEngine][]) {
      const ckpt = await loadCheckpoint(await modelDirectory(flat, dir, name));
      if (expectedAssets) checkAssets(ckpt.tokenizerFiles, expectedAssets);
      await engine.setState({ weights: ckpt.weights, optimizer: ckpt.optimizer, step: ckpt.step }, { allowMissing: [] });
    }
    return JSON.parse(await readFile(join(flat, 'trainer.json'), 'utf8')) as TrainerState;
  });
}

/** Whether the checkpoint is committed (its manifest is visible); store failures propagate. */
export async function checkpointExists(store: CheckpointStore, id: CheckpointId): Promise<boolean> {
  return store.load(id.runId, id.lineageId, id.iteration, { only: [] }).then(() => true, (err: unknown) => {
    if (err instanceof CheckpointNotFoundError) return false;
    throw err;
  });
}
