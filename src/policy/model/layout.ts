/**
 * Parameter layout: every parameter lives in one of two flat float tensors ("groups"), because
 * onnxruntime pays ~2-3 µs per node and per tensor, so the optimizer updates a few big vectors
 * instead of hundreds of small ones. Weight decay applies per group: `matrices` (embeddings and
 * linear weights) decay, `vectors` (norm weights and biases) do not, as in HF Trainer.
 *
 * The graph consumes *views* (runs of adjacent parameters read as one tensor: q|k|v, see viewPlan;
 * every other view is one parameter). The table maps HF tensor names
 * (`model.layers.0.self_attn.q_proj.weight`) to (group, offset, shape) for checkpoint I/O.
 */
import { ConfigError } from '../../errors.ts';
import { type ModelConfig, hfParameterNames } from '../io/config.ts';

export const GROUPS = ['matrices', 'vectors'] as const;
export type GroupName = (typeof GROUPS)[number];
export type Role = 'actor' | 'critic';

export interface ParamEntry {
  readonly name: string;
  readonly group: GroupName;
  readonly offset: number;
  readonly shape: readonly number[];
  readonly size: number;
}

/** A run of adjacent parameters the graph reads as one tensor (rows concatenated). */
export interface ParamView {
  readonly key: string;
  readonly group: GroupName;
  readonly offset: number;
  readonly shape: readonly number[];
  readonly size: number;
}

export interface Layout {
  readonly config: ModelConfig;
  readonly role: Role;
  readonly groups: Readonly<Record<GroupName, number>>;
  readonly entries: readonly ParamEntry[];
  readonly views: readonly ParamView[];
  readonly byName: ReadonlyMap<string, ParamEntry>;
}

/** The critic's value head, named like HF's AutoModelForTokenClassification head (num_labels = 1). */
export const VALUE_HEAD = { weight: 'score.weight', bias: 'score.bias' } as const;

/**
 * [view key, member HF names] in packing order; a member's group is decided by its rank. q|k|v is
 * one view, so one Gemm projects all three and one transpose puts their heads first, after which
 * they split along the head axis in large contiguous blocks (see transformer.ts attention). The
 * MLP's gate and up stay separate: splitting their fused output costs a pass over [N, 2I] per
 * direction, more than a second Gemm launch.
 */
function viewPlan(config: ModelConfig, role: Role): [string, string[]][] {
  const plan: [string, string[]][] = [['embed', ['model.embed_tokens.weight']]];
  for (let i = 0; i < config.numLayers; i++) {
    const p = `model.layers.${i}`;
    const attn = (kind: string) => ['q', 'k', 'v'].map((x) => `${p}.self_attn.${x}_proj.${kind}`);
    plan.push([`${i}.ln1`, [`${p}.input_layernorm.weight`]], [`${i}.qkv`, attn('weight')]);
    if (config.attentionBias) plan.push([`${i}.qkv_bias`, attn('bias')]);
    plan.push([`${i}.o`, [`${p}.self_attn.o_proj.weight`]]);
    if (config.qkNorm) plan.push([`${i}.q_norm`, [`${p}.self_attn.q_norm.weight`]], [`${i}.k_norm`, [`${p}.self_attn.k_norm.weight`]]);
    plan.push([`${i}.ln2`, [`${p}.post_attention_layernorm.weight`]]);
    for (const x of ['gate', 'up', 'down']) plan.push([`${i}.${x}`, [`${p}.mlp.${x}_proj.weight`]]);
  }
  plan.push(['norm', ['model.norm.weight']]);
  if (role === 'critic') plan.push(['score', [VALUE_HEAD.weight]], ['score_bias', [VALUE_HEAD.bias]]);
  else if (!config.tieWordEmbeddings) plan.push(['lm_head', ['lm_head.weight']]);
  return plan;
}

export function buildLayout(config: ModelConfig, role: Role = 'actor'): Layout {
  const shapes = new Map(hfParameterNames(config).map((p) => [p.name, p.shape]));
  shapes.set(VALUE_HEAD.weight, [1, config.hiddenSize]).set(VALUE_HEAD.bias, [1]);
  const next: Record<GroupName, number> = { matrices: 0, vectors: 0 };
  const entries: ParamEntry[] = [];
  const views: ParamView[] = [];
  for (const [key, names] of viewPlan(config, role)) {
    const members = names.map((name) => ({ name, shape: shapes.get(name)! }));
    const group: GroupName = members[0].shape.length === 2 ? 'matrices' : 'vectors';
    const offset = next[group];
    for (const { name, shape } of members) {
      const size = shape.reduce((a, b) => a * b, 1);
      entries.push({ name, group, offset: next[group], shape, size });
      next[group] += size;
    }
    const rows = members.reduce((s, m) => s + m.shape[0], 0);
    views.push({ key, group, offset, shape: [rows, ...members[0].shape.slice(1)], size: next[group] - offset });
  }
  return { config, role, groups: { ...next }, entries, views, byName: new Map(entries.map((e) => [e.name, e])) };
}

export function view(layout: Layout, key: string): ParamView {
  const v = layout.views.find((x) => x.key === key);
  if (!v) throw new ConfigError('layout', `no parameter view ${key}`);
  return v;
}

export function paramCount(layout: Layout): number {
  return layout.groups.matrices + layout.groups.vectors;
}
