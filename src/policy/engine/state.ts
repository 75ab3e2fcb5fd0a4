/**
 * Checkpoint state as named tensors: weights under HF names, AdamW moments under the same names,
 * and the step count — the fields of io/checkpoint.ts's TrainingCheckpoint, so
 * `saveCheckpoint(dir, { config, ...exportState(policy), rng, tokenizerFiles })` saves a policy.
 * With LoRA the state is what is trained: the adapters under PEFT's names (and a critic's value
 * head), their moments and the step; the frozen base is not part of it (Policy.setBase sets it).
 */
import { ConfigError } from '../../errors.ts';
import type { Tensor } from '../io/dtype.ts';
import { type Layout, VALUE_HEAD } from '../model/layout.ts';
import { type Packed, clonePacked, fromNamed, toNamed } from '../model/params.ts';

export interface PolicyState {
  readonly weights: ReadonlyMap<string, Tensor>;
  /** AdamW moments by parameter name; null before the first step or when not requested. */
  readonly optimizer: { readonly m: ReadonlyMap<string, Tensor>; readonly v: ReadonlyMap<string, Tensor> } | null;
  /** Optimizer steps taken (AdamW's bias correction continues from here). */
  readonly step: number;
}

export interface ImportOptions {
  /**
   * Parameters that may be absent and keep their current values. Default: the critic's value
   * head (a critic starts from a pretrained LM checkpoint, which has none).
   */
  readonly allowMissing?: readonly string[];
}

/** What saving and loading a state needs of a policy (Policy has it): its layout, packed weights and moments, step. */
export interface PackedPolicy {
  readonly layout: Layout;
  readonly step: number;
  getParams(): Packed;
  setParams(p: Packed, copy?: boolean): void;
  getMoments(): { m: Packed; v: Packed } | null;
  setMoments(moments: { m: Packed; v: Packed } | null, step: number, copy?: boolean): void;
}

/**
 * The policy's state (weights always; moments when `optimizer` and any exist): a copy, or with `copy` false views of
 * its live buffers, valid until its next operation (what a checkpoint writes at once, under the policy's lock).
 */
export function exportState(policy: PackedPolicy, optimizer = true, copy = true): PolicyState {
  const named = (p: Packed) => new Map(Object.entries(toNamed(policy.layout, copy ? clonePacked(p) : p)));
  const moments = optimizer ? policy.getMoments() : null;
  return {
    weights: named(policy.getParams()),
    optimizer: moments && { m: named(moments.m), v: named(moments.v) },
    step: policy.step,
  };
}

/**
 * Loads weights (and moments and step, when present) into the policy. Tensors must hold F32/F64
 * values (the safetensors reader widens F16/BF16). Returns the names that were not used, e.g. an
 * lm_head.weight a tied or critic model does not have.
 */
export function importState(policy: PackedPolicy, state: PolicyState, opts: ImportOptions = {}): { unused: string[] } {
  const allowed = new Set(opts.allowMissing ?? [VALUE_HEAD.weight, VALUE_HEAD.bias]);
  const missing = policy.layout.entries.map((e) => e.name).filter((n) => !state.weights.has(n) && !allowed.has(n));
  if (missing.length)
    throw new ConfigError(missing[0], `missing from the checkpoint (${missing.length} parameters missing)`);
  const complete = policy.layout.entries.every((e) => state.weights.has(e.name));
  const base = complete ? undefined : policy.getParams();
  const { packed, unused } = fromNamed(policy.layout, Object.fromEntries(state.weights), base);
  policy.setParams(packed, false);
  if (state.optimizer) {
    const m = fromNamed(policy.layout, Object.fromEntries(state.optimizer.m)).packed;
    const v = fromNamed(policy.layout, Object.fromEntries(state.optimizer.v)).packed;
    policy.setMoments({ m, v }, state.step, false); // packed just now: nothing else holds them
  } else {
    policy.setMoments(null, state.step);
  }
  return { unused };
}
