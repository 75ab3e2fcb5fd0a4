/**
 * LoRA (Hu et al. 2021) as PEFT implements it for a causal LM: a targeted projection y = x·Wᵀ
 * becomes y = x·Wᵀ + (alpha / r)·(x·Aᵀ)·Bᵀ with A [r, in], B [out, r]; W stays frozen. This module
 * holds the settings, their validation, and the PEFT tensor names and shapes; the layout packs
 * them (layout.ts), the forward uses them (transformer.ts), merge.ts folds them back into W.
 */
import { ConfigError } from '../../errors.ts';
import type { ModelConfig } from '../io/config.ts';

export const LORA_TARGETS = ['q', 'k', 'v', 'o', 'gate', 'up', 'down'] as const;
export type LoraTarget = (typeof LORA_TARGETS)[number];

export interface LoraSpec {
  readonly rank: number;
  readonly alpha: number;
  /** Must be 0: training here is deterministic, and dropout on the adapter input would break that. */
  readonly dropout: 0;
  readonly targets: readonly LoraTarget[];
}

/** The HF module of each target, under `model.layers.{i}.` (PEFT's target_modules are the last parts). */
const MODULES: Readonly<Record<LoraTarget, string>> = {
  q: 'self_attn.q_proj',
  k: 'self_attn.k_proj',
  v: 'self_attn.v_proj',
  o: 'self_attn.o_proj',
  gate: 'mlp.gate_proj',
  up: 'mlp.up_proj',
  down: 'mlp.down_proj',
};

/** PEFT's target_modules name of a target (q → q_proj). */
export const peftModule = (t: LoraTarget): string => MODULES[t].split('.')[1];

export function targetOfModule(name: string): LoraTarget | undefined {
  return LORA_TARGETS.find((t) => peftModule(t) === name);
}

/** Validates options from callers (plain objects: the type system does not reach a JSON config). */
export function checkLora(spec: LoraSpec): void {
  if (!Number.isSafeInteger(spec.rank) || spec.rank < 1)
    throw new ConfigError('lora.rank', `${spec.rank} is not an integer >= 1`);
  if (!(spec.alpha > 0) || !Number.isFinite(spec.alpha))
    throw new ConfigError('lora.alpha', `${spec.alpha} is not a positive number`);
  if (spec.dropout !== 0)
    throw new ConfigError('lora.dropout', `must be 0 (got ${spec.dropout}): starpo trains deterministically`);
  const targets = spec.targets as readonly string[];
  if (!Array.isArray(targets) || targets.length === 0)
    throw new ConfigError('lora.targets', 'must name at least one projection');
  const unknown = targets.find((t) => !(LORA_TARGETS as readonly string[]).includes(t));
  if (unknown !== undefined)
    throw new ConfigError(
      'lora.targets',
      `unknown projection ${JSON.stringify(unknown)} (use ${LORA_TARGETS.join(', ')})`,
    );
  if (new Set(targets).size !== targets.length) throw new ConfigError('lora.targets', 'lists a projection twice');
}

/** PEFT's default scaling alpha / r (not rsLoRA's alpha / √r). */
export const loraScale = (spec: LoraSpec): number => spec.alpha / spec.rank;

/** [out, in] of a target's base weight. */
export function targetShape(cfg: ModelConfig, t: LoraTarget): [number, number] {
  const { hiddenSize: D, intermediateSize: I, numHeads: H, numKvHeads: K, headDim: E } = cfg;
  const shapes: Record<LoraTarget, [number, number]> = {
    q: [H * E, D],
    k: [K * E, D],
    v: [K * E, D],
    o: [D, H * E],
    gate: [I, D],
    up: [I, D],
    down: [D, I],
  };
  return shapes[t];
}

/** The HF name of the base weight a target adapts in layer i. */
export const baseName = (i: number, t: LoraTarget): string => `model.layers.${i}.${MODULES[t]}.weight`;

/** PEFT's saved name of an adapter matrix (the adapter name "default" is not part of saved names). */
export const adapterName = (i: number, t: LoraTarget, which: 'A' | 'B'): string =>
  `base_model.model.model.layers.${i}.${MODULES[t]}.lora_${which}.weight`;

/** Targets in canonical order (the order of the fused q|k|v block and of packing), whatever order was given. */
export const orderedTargets = (spec: LoraSpec): LoraTarget[] => LORA_TARGETS.filter((t) => spec.targets.includes(t));
