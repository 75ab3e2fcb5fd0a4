/**
 * Parameter layout: every parameter lives in one of two flat float tensors ("groups"), because
 * onnxruntime pays ~2-3 µs per node and per tensor, so the optimizer updates a few big vectors
 * instead of hundreds of small ones. Weight decay applies per group: `matrices` (embeddings and
 * linear weights) decay, `vectors` (norm weights and biases) do not, as in HF Trainer.
 *
 * The graph consumes *views* (runs of adjacent parameters read as one tensor: q|k|v, see viewPlan;
 * every other view is one parameter). The table maps HF tensor names
 * (`model.layers.0.self_attn.q_proj.weight`) to (group, offset, shape) for checkpoint I/O.
 *
 * With LoRA the groups hold only what is trained: the adapters (and a critic's value head), while
 * the base model is a second, frozen layout (`frozen`) packed the same way but never optimised.
 */
import { ConfigError } from '../../errors.ts';
import { type ModelConfig, hfParameterNames } from '../io/config.ts';
import { type LoraSpec, type LoraTarget, adapterName, checkLora, orderedTargets, targetShape } from './lora.ts';

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
  /** LoRA settings when the groups hold adapters, else null. */
  readonly lora: LoraSpec | null;
  /** With LoRA, the frozen base model's layout (fed to every program, never trained); else null. */
  readonly frozen: Layout | null;
}

/** The critic's value head, named like HF's AutoModelForTokenClassification head (num_labels = 1). */
export const VALUE_HEAD = { weight: 'score.weight', bias: 'score.bias' } as const;

type Member = { readonly name: string; readonly shape: readonly number[] };
/** [view key, members] in packing order; a member's group is decided by its rank. */
type Plan = [string, Member[]][];

/**
 * The base model's views. q|k|v is one view, so one Gemm projects all three and one transpose puts
 * their heads first, after which they split along the head axis in large contiguous blocks (see
 * transformer.ts attention). The MLP's gate and up stay separate: splitting their fused output costs
 * a pass over [N, 2I] per direction, more than a second Gemm launch.
 */
function viewPlan(config: ModelConfig, role: Role, valueHead: boolean): Plan {
  const shapes = new Map(hfParameterNames(config).map((p) => [p.name, p.shape]));
  const views = (key: string, names: string[]): [string, Member[]] => [
    key,
    names.map((name) => ({ name, shape: shapes.get(name)! })),
  ];
  const plan: Plan = [views('embed', ['model.embed_tokens.weight'])];
  for (let i = 0; i < config.numLayers; i++) {
    const p = `model.layers.${i}`;
    const attn = (kind: string) => ['q', 'k', 'v'].map((x) => `${p}.self_attn.${x}_proj.${kind}`);
    plan.push(views(`${i}.ln1`, [`${p}.input_layernorm.weight`]), views(`${i}.qkv`, attn('weight')));
    if (config.attentionBias) plan.push(views(`${i}.qkv_bias`, attn('bias')));
    plan.push(views(`${i}.o`, [`${p}.self_attn.o_proj.weight`]));
    if (config.qkNorm)
      plan.push(
        views(`${i}.q_norm`, [`${p}.self_attn.q_norm.weight`]),
        views(`${i}.k_norm`, [`${p}.self_attn.k_norm.weight`]),
      );
    plan.push(views(`${i}.ln2`, [`${p}.post_attention_layernorm.weight`]));
    for (const x of ['gate', 'up', 'down']) plan.push(views(`${i}.${x}`, [`${p}.mlp.${x}_proj.weight`]));
  }
  plan.push(views('norm', ['model.norm.weight']));
  if (role === 'critic' && valueHead) plan.push(...valueHeadPlan(config));
  else if (role === 'actor' && !config.tieWordEmbeddings) plan.push(views('lm_head', ['lm_head.weight']));
  return plan;
}

function valueHeadPlan(config: ModelConfig): Plan {
  return [
    ['score', [{ name: VALUE_HEAD.weight, shape: [1, config.hiddenSize] }]],
    ['score_bias', [{ name: VALUE_HEAD.bias, shape: [1] }]],
  ];
}

/**
 * The trained views under LoRA. The A matrices of q, k and v are adjacent, so they form one view
 * [n·r, D] (`<i>.qkv.lora_A`) that one Gemm applies to the fused projection's input; each B is its
 * own view (`<i>.<t>.lora_B`). Adapters are 2-D, so they land in `matrices` and decay, as PEFT's
 * weights do under HF Trainer (which exempts only biases and norm weights); a critic's value head is
 * trained in full (PEFT's modules_to_save) and keeps its usual groups.
 */
function adapterPlan(config: ModelConfig, role: Role, spec: LoraSpec): Plan {
  const r = spec.rank;
  const targets = orderedTargets(spec);
  const member = (i: number, t: LoraTarget, which: 'A' | 'B'): Member => {
    const [out, inp] = targetShape(config, t);
    return { name: adapterName(i, t, which), shape: which === 'A' ? [r, inp] : [out, r] };
  };
  const plan: Plan = [];
  for (let i = 0; i < config.numLayers; i++) {
    const fused: LoraTarget[] = targets.filter((t) => t === 'q' || t === 'k' || t === 'v');
    if (fused.length) plan.push([`${i}.qkv.lora_A`, fused.map((t) => member(i, t, 'A'))]);
    for (const t of fused) plan.push([`${i}.${t}.lora_B`, [member(i, t, 'B')]]);
    for (const t of targets.filter((x) => !fused.includes(x))) {
      plan.push([`${i}.${t}.lora_A`, [member(i, t, 'A')]], [`${i}.${t}.lora_B`, [member(i, t, 'B')]]);
    }
  }
  return role === 'critic' ? [...plan, ...valueHeadPlan(config)] : plan;
}

function pack(config: ModelConfig, role: Role, plan: Plan, lora: LoraSpec | null, frozen: Layout | null): Layout {
  const next: Record<GroupName, number> = { matrices: 0, vectors: 0 };
  const entries: ParamEntry[] = [];
  const views: ParamView[] = [];
  for (const [key, members] of plan) {
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
  const byName = new Map(entries.map((e) => [e.name, e]));
  return { config, role, groups: { ...next }, entries, views, byName, lora, frozen };
}

export function buildLayout(config: ModelConfig, role: Role = 'actor', lora: LoraSpec | null = null): Layout {
  if (!lora) return pack(config, role, viewPlan(config, role, true), null, null);
  checkLora(lora);
  const frozen = pack(config, role, viewPlan(config, role, false), null, null);
  return pack(config, role, adapterPlan(config, role, lora), lora, frozen);
}

export function view(layout: Layout, key: string): ParamView {
  const v = layout.views.find((x) => x.key === key);
  if (!v) throw new ConfigError('layout', `no parameter view ${key}`);
  return v;
}

/** Trained parameters (with LoRA: the adapters and a critic's value head). */
export function paramCount(layout: Layout): number {
  return layout.groups.matrices + layout.groups.vectors;
}

/** The groups that hold any parameter (an actor's adapters are all matrices: no `vectors` group). */
export function groupsOf(layout: Layout): GroupName[] {
  return GROUPS.filter((g) => layout.groups[g] > 0);
}
