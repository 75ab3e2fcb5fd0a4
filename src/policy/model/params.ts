/**
 * Packed parameter values: seeded initialisation (HF's scheme) and conversion between the packed
 * groups and named tensors with HF names, which is what checkpoints and safetensors files hold.
 */
import { ConfigError } from '../../errors.ts';
import type { Tensor } from '../io/dtype.ts';
import { GROUPS, type GroupName, type Layout } from './layout.ts';
import { Rng } from './rng.ts';

export type Packed = Record<GroupName, Float32Array>;

export function zerosLike(layout: Layout): Packed {
  return { matrices: new Float32Array(layout.groups.matrices), vectors: new Float32Array(layout.groups.vectors) };
}

/** Adapters draw from their own streams, so they do not repeat the draws of a base initialised from the same seed. */
const ADAPTER_STREAM = 0x4c6f5241;

/** Values per initialisation chunk: each chunk has its own random stream (Rng.forStream(seed, entry, chunk)). */
export const INIT_CHUNK = 1 << 20;

/** One chunk of the random initialisation: values [start, end) of a group, drawn from stream (entry, chunk). */
export interface InitTask {
  readonly group: GroupName;
  readonly start: number;
  readonly end: number;
  readonly entry: number;
  readonly chunk: number;
  /** normal: scale · N(0, 1); uniform: scale · U(−1, 1). */
  readonly kind: 'normal' | 'uniform';
  readonly scale: number;
}

/**
 * HF's `_init_weights` for these models: linear and embedding weights ~ N(0, initializer_range),
 * biases 0, RMSNorm weights 1. LoRA adapters follow PEFT's default: A ~ kaiming_uniform(a = √5) =
 * U(−1/√in, 1/√in), B = 0, so a fresh adapter leaves the base model's outputs exactly as they were.
 * The random values come in chunks of INIT_CHUNK, each from its own stream keyed by (seed, parameter
 * index in layout order, chunk index), so they are the same whichever thread draws which chunk
 * (initParamsParallel). Constant parts (ones, zeros) are filled here.
 */
export function initPlan(layout: Layout, seed: number): { seed: number; tasks: InitTask[]; packed: Packed } {
  const packed = zerosLike(layout);
  const tasks: InitTask[] = [];
  const std = layout.config.initializerRange;
  layout.entries.forEach((e, entry) => {
    if (e.name.endsWith('.lora_B.weight')) return;
    const lora = e.name.endsWith('.lora_A.weight');
    if (!lora && e.shape.length !== 2) {
      if (e.name.endsWith('norm.weight')) packed[e.group].fill(1, e.offset, e.offset + e.size);
      return;
    }
    const [kind, scale] = lora ? ['uniform' as const, 1 / Math.sqrt(e.shape[1])] : ['normal' as const, std];
    for (let at = 0, chunk = 0; at < e.size; at += INIT_CHUNK, chunk++) {
      tasks.push({
        group: e.group,
        start: e.offset + at,
        end: e.offset + Math.min(e.size, at + INIT_CHUNK),
        entry,
        chunk,
        kind,
        scale,
      });
    }
  });
  return { seed: layout.lora ? (seed ^ ADAPTER_STREAM) >>> 0 : seed, tasks, packed };
}

/** Draws one chunk into `out` (the task's group). */
export function runInitTask(out: Float32Array, seed: number, t: InitTask): void {
  const rng = Rng.forStream(seed, t.entry, t.chunk);
  if (t.kind === 'normal') rng.fillNormal(out, t.start, t.end, t.scale);
  else for (let i = t.start; i < t.end; i++) out[i] = t.scale * (2 * rng.next() - 1);
}

/** The seeded initialisation (see initPlan), drawn on this thread. */
export function initParams(layout: Layout, seed: number): Packed {
  const { seed: s, tasks, packed } = initPlan(layout, seed);
  for (const t of tasks) runInitTask(packed[t.group], s, t);
  return packed;
}

/** Named F32 tensors (HF names) viewing the packed buffers; `prefix` distinguishes optimizer state. */
export function toNamed(layout: Layout, packed: Packed, prefix = ''): Record<string, Tensor> {
  const out: Record<string, Tensor> = {};
  for (const e of layout.entries) {
    out[prefix + e.name] = {
      dtype: 'F32',
      shape: e.shape,
      data: packed[e.group].subarray(e.offset, e.offset + e.size),
    };
  }
  return out;
}

/**
 * Packs named tensors (F32 or F64 data; half precision must already be widened). Names missing
 * from `tensors` keep their values from `base` or are an error without one; extra names are
 * returned so callers can warn (e.g. a checkpoint's lm_head for a critic).
 */
export function fromNamed(
  layout: Layout,
  tensors: Readonly<Record<string, Tensor>>,
  base?: Packed,
  prefix = '',
): { packed: Packed; unused: string[] } {
  const packed = base ? { matrices: base.matrices.slice(), vectors: base.vectors.slice() } : zerosLike(layout);
  for (const e of layout.entries) {
    const t = tensors[prefix + e.name];
    if (!t) {
      if (!base) throw new ConfigError(prefix + e.name, 'missing from the checkpoint');
      continue;
    }
    if (t.shape.length !== e.shape.length || t.shape.some((d, i) => d !== e.shape[i])) {
      throw new ConfigError(prefix + e.name, `shape [${t.shape}] differs from the model's [${e.shape}]`);
    }
    if (!(t.data instanceof Float32Array || t.data instanceof Float64Array)) {
      throw new ConfigError(prefix + e.name, `must be F32/F64 values in memory (got ${t.dtype})`);
    }
    packed[e.group].set(t.data, e.offset);
  }
  const known = new Set(layout.entries.map((e) => prefix + e.name));
  const unused = Object.keys(tensors).filter((k) => k.startsWith(prefix) && !known.has(k));
  return { packed, unused };
}

export function clonePacked(p: Packed): Packed {
  return Object.fromEntries(GROUPS.map((g) => [g, p[g].slice()])) as Packed;
}
