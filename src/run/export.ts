/**
 * `starpo export`: a run's actor at one checkpoint as a Hugging Face model directory — config.json,
 * safetensors weights (LoRA adapters merged into the base: W + (alpha/r)·B·A), the tokenizer files, chat
 * template and generation config the run trained with — that transformers, vLLM and starpo's own `--model`
 * load as they load any model. A LoRA run can also write its adapters in PEFT's format (`adapter/`).
 */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ConfigError } from '../errors.ts';
import { Policy } from '../policy/engine/policy.ts';
import { exportState } from '../policy/engine/state.ts';
import { writeModelConfig } from '../policy/io/config.ts';
import type { Tensor } from '../policy/io/dtype.ts';
import { writePeftAdapter } from '../policy/io/peft.ts';
import { writeModelWeights } from '../policy/io/sharded.ts';
import { mergeLora } from '../policy/model/merge.ts';
import { toNamed } from '../policy/model/params.ts';
import { chooseCheckpoint, parseCheckpointRef } from './checkpoint-ref.ts';
import { readRunConfig } from './location.ts';
import { createLocalCheckpointStore, type CheckpointId } from '../storage/index.ts';
import { loadPretrained } from './models.ts';
import { loadRunCheckpoint } from './checkpoint.ts';
import { BASE_MODEL_FILE, resolveRunModel } from '../rl/run-model.ts';

export interface ExportOptions {
  /** "<run-dir>[@iteration]" (a run id under runsDir works too). */
  readonly checkpoint: string;
  readonly runsDir?: string;
  /** The directory to create; it must not exist or be empty. */
  readonly out: string;
  /** Storage dtype of the weights (default F32, what was trained; BF16 halves the size). */
  readonly dtype?: 'F32' | 'BF16';
  /** Also write the LoRA adapters in PEFT's format under `<out>/adapter/`. */
  readonly peft?: boolean;
}

export interface ExportResult {
  readonly checkpoint: CheckpointId;
  readonly out: string;
  readonly merged: boolean;
  readonly files: string[];
}

export async function exportCheckpoint(o: ExportOptions): Promise<ExportResult> {
  const out = resolve(o.out);
  if ((await readdir(out).catch(() => [])).length > 0)
    throw new ConfigError('--out', `${o.out} exists and is not empty`);
  const ref = parseCheckpointRef(o.checkpoint, o.runsDir);
  const c = await readRunConfig(ref);
  const run = await resolveRunModel(c);
  if (o.peft && !run.lora)
    throw new ConfigError('--peft', `run ${ref.runId} trained every weight (no LoRA adapters to write)`);
  const store = createLocalCheckpointStore({ root: ref.root });
  const checkpoint = await chooseCheckpoint(ref, await store.list(ref.runId), ref.iteration);
  const actor = new Policy({
    config: run.modelConfig,
    role: 'actor',
    seed: c.seed,
    lora: run.lora ?? undefined,
    threads: 1,
  });
  try {
    await loadPretrained({ actor, critic: null, ref: null }, run, c, false);
    await loadRunCheckpoint(store, checkpoint, { actor }, run.assets);
    const weights = run.lora
      ? mergeLora(actor.layout, actor.getBase()!, actor.getParams())
      : toNamed(actor.layout, actor.getParams());
    const dtype = o.dtype ?? 'F32';
    await mkdir(out, { recursive: true });
    const typed = Object.entries(weights).map(([n, t]): [string, Tensor] => [n, { ...t, dtype }]);
    const files = [...(await writeModelWeights(out, typed)).keys()];
    await writeFile(join(out, 'config.json'), writeModelConfig(run.modelConfig));
    for (const [name, text] of Object.entries(run.assets)) {
      if (name !== BASE_MODEL_FILE) await writeFile(join(out, name), text);
    }
    files.push('config.json', ...Object.keys(run.assets).filter((n) => n !== BASE_MODEL_FILE));
    if (o.peft && run.lora) {
      await mkdir(join(out, 'adapter'));
      const baseModel = run.pretrained?.dir ?? `${ref.runId} (a model trained from scratch)`;
      await writePeftAdapter(join(out, 'adapter'), {
        lora: run.lora,
        baseModel,
        role: 'actor',
        weights: exportState(actor, false).weights,
      });
      files.push('adapter/adapter_config.json', 'adapter/adapter_model.safetensors');
    }
    return { checkpoint, out, merged: run.lora !== null, files };
  } finally {
    await actor.close();
  }
}
