/**
 * LoRA adapters in PEFT's on-disk format, so `PeftModel.from_pretrained(base, dir)` loads what starpo
 * trained and starpo loads what PEFT trained:
 *   adapter_config.json        LoraConfig fields (r, lora_alpha, target_modules, …)
 *   adapter_model.safetensors  `base_model.model.model.layers.{i}.self_attn.q_proj.lora_A.weight` [r, in],
 *                              `…lora_B.weight` [out, r]; a critic's value head (modules_to_save) as
 *                              `base_model.model.score.weight` / `.bias`
 * In memory the adapters keep those names and the value head its plain `score.*` names (layout.ts).
 * Reading refuses every LoraConfig setting that would make PEFT compute something else than starpo
 * (dropout, rsLoRA, DoRA, per-layer ranks, …), naming it.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '../../errors.ts';
import type { Role } from '../model/layout.ts';
import {
  type LoraSpec,
  type LoraTarget,
  checkLora,
  orderedTargets,
  peftModule,
  targetOfModule,
} from '../model/lora.ts';
import { writeBytesAtomic } from '../../storage/atomic-file.ts';
import type { Tensor } from './dtype.ts';
import { readSafetensors, writeSafetensors } from './safetensors.ts';

export const ADAPTER_CONFIG_FILE = 'adapter_config.json';
export const ADAPTER_WEIGHTS_FILE = 'adapter_model.safetensors';

export interface PeftAdapter {
  readonly lora: LoraSpec;
  /** base_model_name_or_path: the base model's directory or hub id. */
  readonly baseModel: string;
  /** actor = PEFT's CAUSAL_LM; critic = TOKEN_CLS with the `score` head in modules_to_save. */
  readonly role: Role;
  /** Trained tensors under the policy's names (exportState's weights). */
  readonly weights: ReadonlyMap<string, Tensor>;
}

const HEAD_PREFIX = 'base_model.model.';
const TASK: Readonly<Record<Role, string>> = { actor: 'CAUSAL_LM', critic: 'TOKEN_CLS' };

/** The adapter_config.json object PEFT's LoraConfig reads. */
export function adapterConfig(a: Omit<PeftAdapter, 'weights'>): Record<string, unknown> {
  checkLora(a.lora);
  return {
    peft_type: 'LORA',
    task_type: TASK[a.role],
    base_model_name_or_path: a.baseModel,
    r: a.lora.rank,
    lora_alpha: a.lora.alpha,
    lora_dropout: 0,
    target_modules: orderedTargets(a.lora).map(peftModule),
    bias: 'none',
    fan_in_fan_out: false,
    use_rslora: false,
    use_dora: false,
    init_lora_weights: true,
    modules_to_save: a.role === 'critic' ? ['score'] : null,
    layers_to_transform: null,
    rank_pattern: {},
    alpha_pattern: {},
    inference_mode: true,
  };
}

/** Writes adapter_model.safetensors, then adapter_config.json (each atomically). */
export async function writePeftAdapter(dir: string, a: PeftAdapter): Promise<void> {
  const config = adapterConfig(a);
  const named = [...a.weights].map(([name, t]) => [name.startsWith('score.') ? HEAD_PREFIX + name : name, t] as const);
  await writeSafetensors(join(dir, ADAPTER_WEIGHTS_FILE), named, { format: 'pt' });
  await writeBytesAtomic(join(dir, ADAPTER_CONFIG_FILE), `${JSON.stringify(config, null, 2)}\n`);
}

export async function readPeftAdapter(dir: string): Promise<PeftAdapter> {
  const text = await readFile(join(dir, ADAPTER_CONFIG_FILE), 'utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    throw new ConfigError(ADAPTER_CONFIG_FILE, 'is not valid JSON', { cause });
  }
  const { lora, baseModel, role } = parseAdapterConfig(json);
  const { tensors } = await readSafetensors(join(dir, ADAPTER_WEIGHTS_FILE));
  const weights = new Map(
    [...tensors].map(([name, t]) => [
      name.startsWith(`${HEAD_PREFIX}score.`) ? name.slice(HEAD_PREFIX.length) : name,
      t,
    ]),
  );
  return { lora, baseModel, role, weights };
}

/** Settings PEFT would compute differently from starpo, with the only value accepted (absent is accepted too). */
const REFUSED: Readonly<Record<string, unknown>> = {
  lora_dropout: 0,
  bias: 'none',
  fan_in_fan_out: false,
  use_rslora: false,
  use_dora: false,
  layers_to_transform: null,
};

export function parseAdapterConfig(json: unknown): Omit<PeftAdapter, 'weights'> {
  const c = (typeof json === 'object' && json !== null ? json : {}) as Record<string, unknown>;
  const field = (name: string) => `${ADAPTER_CONFIG_FILE} ${name}`;
  if (c.peft_type !== 'LORA') throw new ConfigError(field('peft_type'), `${JSON.stringify(c.peft_type)} is not "LORA"`);
  for (const [name, want] of Object.entries(REFUSED)) {
    if (c[name] !== undefined && c[name] !== want)
      throw new ConfigError(field(name), `${JSON.stringify(c[name])} is not supported (only ${JSON.stringify(want)})`);
  }
  for (const name of ['rank_pattern', 'alpha_pattern']) {
    if (c[name] != null && Object.keys(c[name] as object).length > 0)
      throw new ConfigError(field(name), 'per-module ranks are not supported');
  }
  const role = Object.entries(TASK).find(([, task]) => task === c.task_type)?.[0] as Role | undefined;
  if (!role) throw new ConfigError(field('task_type'), `${JSON.stringify(c.task_type)} is not CAUSAL_LM or TOKEN_CLS`);
  const saved = (c.modules_to_save ?? []) as unknown[];
  if (!Array.isArray(saved) || saved.some((m) => role !== 'critic' || m !== 'score')) {
    throw new ConfigError(
      field('modules_to_save'),
      `${JSON.stringify(c.modules_to_save)}: only a critic's "score" head is trained in full`,
    );
  }
  const lora = {
    rank: c.r as number,
    alpha: c.lora_alpha as number,
    dropout: 0 as const,
    targets: targetsOf(c.target_modules),
  };
  if (!Number.isSafeInteger(lora.rank) || lora.rank < 1)
    throw new ConfigError(field('r'), `${JSON.stringify(c.r)} is not an integer >= 1`);
  if (!(lora.alpha > 0) || !Number.isFinite(lora.alpha))
    throw new ConfigError(field('lora_alpha'), `${JSON.stringify(c.lora_alpha)} is not a positive number`);
  checkLora(lora);
  return { lora, baseModel: typeof c.base_model_name_or_path === 'string' ? c.base_model_name_or_path : '', role };
}

function targetsOf(modules: unknown): LoraTarget[] {
  const field = `${ADAPTER_CONFIG_FILE} target_modules`;
  if (!Array.isArray(modules) || modules.length === 0)
    throw new ConfigError(field, 'must be a non-empty list of module names (a regex is not supported)');
  return modules.map((m) => {
    const t = targetOfModule(String(m));
    if (!t)
      throw new ConfigError(
        field,
        `${JSON.stringify(m)} is not one of q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj`,
      );
    return t;
  });
}
