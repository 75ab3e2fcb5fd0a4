/**
 * Whether a run can fit in this machine's memory at all, checked before it writes anything. The field
 * table bounds each knob alone (config-fields.ts); here the knobs meet the model's shape: parameters times
 * the copies training keeps, and the KV cache of one batched generation call. Both figures are lower
 * bounds (activations, onnxruntime arenas and gradients come on top), so a run refused here could never
 * have run; one that passes may still need more.
 */
import { totalmem } from 'node:os';
import { ConfigError } from '../errors.ts';
import type { ModelConfig } from '../policy/io/config.ts';
import type { LoraSpec } from '../policy/model/lora.ts';
import { buildLayout, paramCount } from '../policy/model/layout.ts';
import { hasReferenceModel, type RlConfig } from './config.ts';

const FLOAT_BYTES = 4;
/** A trained model keeps its weights and AdamW's two moments (gradients and the swap buffers come on top). */
const TRAINED_COPIES = 3;

export interface MemoryNeeds {
  /** Parameters of one model (with LoRA: the frozen base plus the adapters). */
  parameters: number;
  /** Bytes of weights and optimizer state of every model the run holds. */
  modelBytes: number;
  /** Bytes of the largest generation call's KV cache (training rollouts or validation). */
  kvCacheBytes: number;
  /** The batch behind kvCacheBytes and the field that sets it. */
  batch: { rows: number; field: 'envGroups' | 'valSeeds' };
}

export interface CapacityOptions {
  /** false: the actor alone, weights only (evaluation); default true: every model the run trains. */
  training?: boolean;
}

export function memoryNeeds(
  c: RlConfig,
  model: ModelConfig,
  lora: LoraSpec | null,
  o: CapacityOptions = {},
): MemoryNeeds {
  const actor = buildLayout(model, 'actor', lora);
  const trained = paramCount(actor);
  const frozen = actor.frozen ? paramCount(actor.frozen) : 0;
  const training = o.training ?? true;
  const copies = training ? TRAINED_COPIES * (1 + (c.critic ? 1 : 0)) + (hasReferenceModel(c) ? 1 : 0) : 1;
  const modelBytes = FLOAT_BYTES * (trained * copies + frozen);
  const train = training ? c.envGroups * c.groupSize : 0;
  const val = c.valSeeds * c.valSamples;
  const batch = train >= val ? { rows: train, field: 'envGroups' as const } : { rows: val, field: 'valSeeds' as const };
  // Keys and values of every layer for every row, over at least the tokens one turn may write.
  const perToken = 2 * model.numLayers * model.numKvHeads * model.headDim * FLOAT_BYTES;
  const kvCacheBytes = batch.rows * Math.min(c.maxResponseTokens, c.modelContext) * perToken;
  return { parameters: trained + frozen, modelBytes, kvCacheBytes, batch };
}

export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) [n, i] = [n / 1024, i + 1];
  return `${n.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

/** A parameter count for a person: 52.1B, 494.0M, 126.3k. */
export function formatCount(n: number): string {
  const [scale, suffix] = (
    [
      [1e12, 'T'],
      [1e9, 'B'],
      [1e6, 'M'],
    ] as const
  ).find(([s]) => n >= s) ?? [1e3, 'k'];
  return `${(n / scale).toFixed(1)}${suffix}`;
}

/** Refuses a run that cannot fit in `memoryBytes` (default: this machine's), naming the field to change and sizes. */
export function checkCapacity(
  c: RlConfig,
  model: ModelConfig,
  lora: LoraSpec | null,
  o: CapacityOptions = {},
  memoryBytes = totalmem(),
): void {
  const needs = memoryNeeds(c, model, lora, o);
  const have = `this machine's ${formatBytes(memoryBytes)} of memory`;
  if (needs.modelBytes > memoryBytes) {
    const shape =
      `${model.numLayers} layers, hidden ${model.hiddenSize}, ffn ${model.intermediateSize}, ` +
      `vocab ${model.vocabSize}`;
    throw new ConfigError(
      c.model ? 'model' : 'modelHidden',
      `a ${formatCount(needs.parameters)}-parameter model (${shape}) needs at least ` +
        `${formatBytes(needs.modelBytes)} for its weights and optimizer state, more than ${have}`,
    );
  }
  if (needs.modelBytes + needs.kvCacheBytes > memoryBytes) {
    const { rows, field } = needs.batch;
    throw new ConfigError(
      field,
      `${rows} sequences generated at once need at least ` +
        `${formatBytes(needs.kvCacheBytes)} of KV cache beside ${formatBytes(needs.modelBytes)} of model state, ` +
        `more than ${have}`,
    );
  }
}
