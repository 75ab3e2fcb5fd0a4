/**
 * LoRA runs on a pretrained directory: checkpoints hold the adapters and the base's identity (not its
 * weights), resume is bitwise, a changed base is refused, and `starpo export` merges the adapters into a
 * Hugging Face directory that scores exactly like the adapter model.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ConfigError } from '../../../src/errors.ts';
import { Policy } from '../../../src/policy/engine/policy.ts';
import { importState } from '../../../src/policy/engine/state.ts';
import { openModelDirectory } from '../../../src/policy/io/model-dir.ts';
import { readSafetensors } from '../../../src/policy/io/safetensors.ts';
import { trainEmbedded } from '../../../src/embedded/driver.ts';
import { exportCheckpoint } from '../../../src/run/export.ts';
import { loadPretrained } from '../../../src/run/models.ts';
import { loadRunCheckpoint } from '../../../src/run/checkpoint.ts';
import { resolveRunModel } from '../../../src/rl/run-model.ts';
import { createLocalCheckpointStore } from '../../../src/storage/index.ts';
import { paperConfig, writeTinyModel } from './tiny-hf-model.ts';

const scratch = mkdtempSync(join(tmpdir(), 'starpo-lora-run-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
const model = await writeTinyModel(join(scratch, 'qwen3'), 'qwen3', { dtype: 'BF16' });
// A large rate so the adapters move far enough from B = 0 for the export comparison to mean something; the compact
// prompt, as what is proven does not depend on the words (RAGEN's full one triples every sequence).
const LORA = ['template=compact', 'loraRank=4', 'loraAlpha=8'];
const config = paperConfig(model, [...LORA, 'lrActor=3e-3', 'lrCritic=3e-3']);
const ckpt = (root: string, it: number, file: string) =>
  join(root, 'r', 'checkpoints', 'main', String(it).padStart(8, '0'), file);

const straight = mkdtempSync(join(scratch, 'straight-'));
const training = trainEmbedded({ root: straight, runId: 'r', config });

test(
  "a LoRA checkpoint holds the adapters only, plus the base directory and its weights' sha256",
  { timeout: 600_000 },
  async () => {
    await training;
    const { tensors } = await readSafetensors(ckpt(straight, 2, 'actor.model.safetensors'));
    assert.ok(
      [...tensors.keys()].every((n) => /\.lora_[AB]\.weight$/.test(n)),
      [...tensors.keys()].slice(0, 3).join(),
    );
    assert.equal(tensors.size, 2 * 7 * 2);
    const base = JSON.parse(readFileSync(ckpt(straight, 2, 'actor.base_model.json'), 'utf8'));
    assert.equal(base.path, model);
    assert.match(base.sha256, /^[0-9a-f]{64}$/);
  },
);

test(
  'a LoRA run stopped after iteration 1 and resumed ends bitwise equal to the uninterrupted one',
  { timeout: 600_000 },
  async () => {
    await training;
    const crashed = mkdtempSync(join(scratch, 'crashed-'));
    await trainEmbedded({ root: crashed, runId: 'r', config, stopAfter: 1 });
    await trainEmbedded({ root: crashed, runId: 'r', resume: true });
    for (const file of ['actor.model.safetensors', 'actor.training_state.safetensors', 'critic.model.safetensors']) {
      assert.ok(readFileSync(ckpt(straight, 2, file)).equals(readFileSync(ckpt(crashed, 2, file))), file);
    }
  },
);

test(
  'export merges the adapters: the exported directory scores like the adapter model, not like the base',
  { timeout: 600_000 },
  async () => {
    await training;
    const out = join(scratch, 'export');
    const r = await exportCheckpoint({ checkpoint: join(straight, 'r'), out, peft: true });
    assert.ok(r.merged && r.files.includes('adapter/adapter_config.json') && r.files.includes('tokenizer_config.json'));
    const batch = {
      batch: 1,
      seqLen: 40,
      tokens: Int32Array.from({ length: 40 }, (_, i) => 1000 + 37 * i),
      attentionMask: new Float32Array(40).fill(1),
    };
    const run = await resolveRunModel(config);
    const lora = new Policy({ config: run.modelConfig, lora: run.lora!, threads: 1 });
    await loadPretrained({ actor: lora, critic: null, ref: null }, run, config, false);
    await loadRunCheckpoint(
      createLocalCheckpointStore({ root: straight }),
      { runId: 'r', lineageId: 'main', iteration: 2 },
      { actor: lora },
    );
    const exported = await openModelDirectory(out);
    const [merged, base] = [
      new Policy({ config: exported.config, threads: 1 }),
      new Policy({ config: run.modelConfig, threads: 1 }),
    ];
    importState(merged, { weights: await exported.readWeights(), optimizer: null, step: 0 });
    importState(base, { weights: await run.pretrained!.readWeights(), optimizer: null, step: 0 });
    const [a, m, b] = await Promise.all([lora, merged, base].map(async (p) => (await p.score(batch)).logprobs!));
    const maxDiff = (x: Float32Array, y: Float32Array) => x.reduce((d, v, i) => Math.max(d, Math.abs(v - y[i])), 0);
    assert.ok(maxDiff(a, m) < 1e-4, `merged vs adapters ${maxDiff(a, m)}`);
    assert.ok(maxDiff(a, b) > 1e-3, `the adapters must have moved (vs base ${maxDiff(a, b)})`);
    await Promise.all([lora, merged, base].map((p) => p.close()));
  },
);

test(
  'a LoRA run whose base weights changed since its checkpoint is refused on resume; the same weights moved load',
  { timeout: 600_000 },
  async () => {
    await training;
    const other = await writeTinyModel(join(scratch, 'qwen3-other'), 'qwen3', { dtype: 'BF16', seed: 99 });
    const moved = readFileSync(ckpt(straight, 2, 'actor.base_model.json'), 'utf8').replace(model, other);
    await writeFile(join(other, 'base_model.json'), moved); // irrelevant file; the weights' hash is what differs
    const c2 = paperConfig(other, [...LORA, 'iterations=3']);
    const store = createLocalCheckpointStore({ root: straight });
    const run = await resolveRunModel(c2);
    const actor = new Policy({ config: run.modelConfig, lora: run.lora!, threads: 1 });
    await assert.rejects(
      loadRunCheckpoint(store, { runId: 'r', lineageId: 'main', iteration: 2 }, { actor }, run.assets),
      (err: unknown) => err instanceof ConfigError && /the LoRA base's weights differ .*sha256/.test(err.message),
    );
    await actor.close();
    // A moved checkout or another cache: the same weights under another path are the same base.
    const elsewhere = join(scratch, 'qwen3-moved');
    cpSync(model, elsewhere, { recursive: true });
    const c3 = paperConfig(elsewhere, [...LORA, 'iterations=3']);
    const moved3 = await resolveRunModel(c3);
    const again = new Policy({ config: moved3.modelConfig, lora: moved3.lora!, threads: 1 });
    await loadPretrained({ actor: again, critic: null, ref: null }, moved3, c3, false);
    const ids = { runId: 'r', lineageId: 'main', iteration: 2 };
    assert.equal((await loadRunCheckpoint(store, ids, { actor: again }, moved3.assets)).iteration, 2);
    await again.close();
  },
);
