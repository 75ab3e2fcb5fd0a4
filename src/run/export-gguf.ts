/**
 * `starpo export <run> --gguf out.gguf`: a run's actor at one checkpoint as a GGUF file for llama.cpp (and
 * what runs on it: ollama, LM Studio, node-llama-cpp). The checkpoint goes through `starpo export` first — a
 * Hugging Face directory with LoRA adapters merged, in F32 — beside the target, which the GGUF is then
 * written from; that directory is removed afterwards, whatever happens.
 */
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { ConfigError } from '../errors.ts';
import { exportCheckpoint } from './export.ts';
import { parseCheckpointRef } from './checkpoint-ref.ts';
import { readRunConfig } from './location.ts';
import type { CheckpointId } from '../storage/index.ts';
import { type GgufExportResult, exportModelGguf } from '../models/gguf/export.ts';
import type { ExportType } from '../models/gguf/quantize.ts';

export interface ExportGgufOptions {
  /** "<run-dir>[@iteration]" (a run id under runsDir works too). */
  readonly checkpoint: string;
  readonly runsDir?: string;
  /** The GGUF file to create; it must not exist. */
  readonly out: string;
  /** Storage type of the matrices (default F32; norms and biases are always F32). */
  readonly dtype?: ExportType;
}

export interface ExportGgufResult extends GgufExportResult {
  readonly checkpoint: CheckpointId;
  readonly merged: boolean;
  readonly bytes: number;
}

export async function exportGguf(o: ExportGgufOptions): Promise<ExportGgufResult> {
  const out = resolve(o.out);
  if (await stat(out).catch(() => null)) throw new ConfigError('--gguf', `${o.out} exists`);
  // A missing run fails here, before anything is created.
  await readRunConfig(parseCheckpointRef(o.checkpoint, o.runsDir));
  await mkdir(dirname(out), { recursive: true });
  // Beside the target rather than in /tmp: a model's F32 copy can be larger than a tmpfs.
  const hf = await mkdtemp(join(dirname(out), `.${basename(out)}.hf-`));
  try {
    const r = await exportCheckpoint({ checkpoint: o.checkpoint, runsDir: o.runsDir, out: hf, dtype: 'F32' });
    const { runId, lineageId, iteration } = r.checkpoint;
    const name = `${runId} ${lineageId}@${iteration}`;
    const g = await exportModelGguf(hf, out, { dtype: o.dtype, name });
    return { ...g, checkpoint: r.checkpoint, merged: r.merged, bytes: (await stat(out)).size };
  } finally {
    await rm(hf, { recursive: true, force: true });
  }
}
