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

/** Adapters draw from their own stream, so they do not repeat the draws of a base initialised from the same seed. */
const ADAPTER_STREAM = 0x4c6f5241;

/**
 * HF's `_init_weights` for these models: linear and embedding weights ~ N(0, initializer_range),
 * biases 0, RMSNorm weights 1. Parameters are drawn in layout order from one seeded stream.
 * LoRA adapters follow PEFT's default: A ~ kaiming_uniform(a = √5) = U(−1/√in, 1/√in), B = 0, so a
 * fresh adapter leaves the base model's outputs exactly as they were.
 */
export function initParams(layout: Layout, seed: number): Packed {
  const rng = new Rng(layout.lora ? (seed ^ ADAPTER_STREAM) >>> 0 : seed);
  const packed = zerosLike(layout);
  const std = layout.config.initializerRange;
  for (const e of layout.entries) {
    const out = packed[e.group].subarray(e.offset, e.offset + e.size);
    if (e.name.endsWith('.lora_B.weight')) continue;
    if (e.name.endsWith('.lora_A.weight')) {
      const bound = 1 / Math.sqrt(e.shape[1]);
      for (let i = 0; i < out.length; i++) out[i] = bound * (2 * rng.next() - 1);
    } else if (e.shape.length === 2) for (let i = 0; i < out.length; i++) out[i] = std * rng.normal();
    else if (e.name.endsWith('norm.weight')) out.fill(1);
  }
  return packed;
}

/** Named F32 tensors (HF names) viewing the packed buffers; `prefix` distinguishes optimizer state. */
export function toNamed(layout: Layout, packed: Packed, prefix = ''): Record<string, Tensor> {
  const out: Record<string, Tensor> = {};
  for (const e of layout.entries) {
    out[prefix + e.name] = { dtype: 'F32', shape: e.shape, data: packed[e.group].subarray(e.offset, e.offset + e.size) };
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
