import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigError } from '../../../src/errors.ts';
import { Policy } from '../../../src/policy/engine/policy.ts';
import { exportState, importState } from '../../../src/policy/engine/state.ts';
import { parseModelConfig } from '../../../src/policy/io/config.ts';
import { ADAPTER_CONFIG_FILE, adapterConfig, readPeftAdapter, writePeftAdapter } from '../../../src/policy/io/peft.ts';
import { readSafetensors } from '../../../src/policy/io/safetensors.ts';
import type { LoraSpec } from '../../../src/policy/model/lora.ts';
import { toNamed } from '../../../src/policy/model/params.ts';

const config = parseModelConfig({
  model_type: 'llama',
  vocab_size: 12,
  hidden_size: 16,
  intermediate_size: 24,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
});
const SPEC: LoraSpec = { rank: 2, alpha: 16, dropout: 0, targets: ['v', 'q', 'o'] };
const batch = {
  batch: 2,
  seqLen: 5,
  tokens: Int32Array.of(1, 2, 3, 4, 5, 6, 7, 8, 9, 10),
  attentionMask: new Float32Array(10).fill(1),
  lossMask: Float32Array.of(0, 1, 1, 1, 1, 0, 1, 1, 1, 1),
  returns: Float32Array.of(0, 1, 0, 1, 0, 1, 0, 1, 0, 1),
  oldValues: new Float32Array(10),
};

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'starpo-lora-'));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test("a LoRA policy's state holds only adapters and their moments, and imports into another policy on the same base exactly", async () => {
  const a = new Policy({ config, seed: 1, threads: 1, lora: SPEC });
  for (let i = 0; i < 2; i++) await a.trainStep(batch, { loss: { kind: 'sft', aggregation: 'token-mean' }, lr: 0.01 });
  const state = exportState(a);
  assert.deepEqual(
    [...state.weights.keys()],
    a.layout.entries.map((e) => e.name),
  );
  assert.equal(state.weights.size, 2 * 3 * config.numLayers);
  assert.deepEqual([...state.optimizer!.m.keys()], [...state.weights.keys()]);
  const b = new Policy({ config, seed: 2, threads: 1, lora: SPEC });
  assert.deepEqual(b.setBase(new Map(Object.entries(toNamed(a.layout.frozen!, a.getBase()!)))), { unused: [] });
  assert.deepEqual(importState(b, state), { unused: [] });
  assert.deepEqual(exportState(b), state);
  assert.deepEqual(await b.score(batch), await a.score(batch));
  await Promise.all([a.close(), b.close()]);
});

test('setBase refuses a plain policy and a base with a weight missing, naming it; extra weights come back unused', () => {
  assert.throws(
    () => new Policy({ config }).setBase({}),
    (e: unknown) => e instanceof ConfigError && e.field === 'lora',
  );
  const critic = new Policy({ config, role: 'critic', lora: SPEC });
  const full = toNamed(new Policy({ config }).layout, new Policy({ config }).getParams());
  assert.deepEqual(critic.setBase(full), { unused: ['lm_head.weight'] });
  const { ['model.norm.weight']: _, ...partial } = full;
  assert.throws(
    () => critic.setBase(partial),
    (e: unknown) => e instanceof ConfigError && e.field === 'model.norm.weight',
  );
});

test("PEFT adapter files round-trip, with PEFT's tensor names and LoraConfig fields; a critic's head is modules_to_save", async () => {
  await withDir(async (dir) => {
    const critic = new Policy({ config, role: 'critic', seed: 3, threads: 1, lora: SPEC });
    await critic.trainStep(batch, { loss: { kind: 'value', clip: 0.5, aggregation: 'token-mean' }, lr: 0.01 });
    const weights = exportState(critic, false).weights;
    await writePeftAdapter(dir, { lora: SPEC, baseModel: '/models/base', role: 'critic', weights });
    assert.deepEqual(await readPeftAdapter(dir), {
      lora: { ...SPEC, targets: ['q', 'v', 'o'] },
      baseModel: '/models/base',
      role: 'critic',
      weights,
    });
    const names = [...(await readSafetensors(join(dir, 'adapter_model.safetensors'))).tensors.keys()].sort();
    assert.deepEqual(names.slice(0, 2), [
      'base_model.model.model.layers.0.self_attn.o_proj.lora_A.weight',
      'base_model.model.model.layers.0.self_attn.o_proj.lora_B.weight',
    ]);
    assert.deepEqual(names.slice(-2), ['base_model.model.score.bias', 'base_model.model.score.weight']);
    const json = JSON.parse(await readFile(join(dir, ADAPTER_CONFIG_FILE), 'utf8'));
    assert.deepEqual([json.task_type, json.modules_to_save], ['TOKEN_CLS', ['score']]);
    await critic.close();
  });
});

test("an actor's adapter_config.json has PEFT's CAUSAL_LM LoRA fields", () => {
  const json = adapterConfig({ lora: SPEC, baseModel: 'Qwen/Qwen2.5-0.5B', role: 'actor' });
  const want = {
    peft_type: 'LORA',
    r: 2,
    lora_alpha: 16,
    lora_dropout: 0,
    target_modules: ['q_proj', 'v_proj', 'o_proj'],
    bias: 'none',
    task_type: 'CAUSAL_LM',
    base_model_name_or_path: 'Qwen/Qwen2.5-0.5B',
    fan_in_fan_out: false,
    use_rslora: false,
    modules_to_save: null,
  };
  assert.deepEqual(Object.fromEntries(Object.keys(want).map((k) => [k, json[k]])), want);
});

test('an adapter PEFT would compute differently (dropout, rsLoRA, DoRA, fan_in_fan_out, per-module ranks, regex targets) is refused by name', async () => {
  await withDir(async (dir) => {
    const good = adapterConfig({ lora: SPEC, baseModel: 'b', role: 'actor' });
    const bad = {
      lora_dropout: 0.05,
      use_rslora: true,
      use_dora: true,
      fan_in_fan_out: true,
      rank_pattern: { q_proj: 4 },
      target_modules: 'q_proj|v_proj',
    };
    for (const [field, value] of Object.entries(bad)) {
      await writeFile(join(dir, ADAPTER_CONFIG_FILE), JSON.stringify({ ...good, [field]: value }));
      await assert.rejects(
        readPeftAdapter(dir),
        (e: unknown) => e instanceof ConfigError && e.field === `${ADAPTER_CONFIG_FILE} ${field}`,
        field,
      );
    }
  });
});
