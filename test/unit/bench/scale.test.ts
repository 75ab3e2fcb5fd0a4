/**
 * `bench scale --model`: the starpo side loads the real model's weights (full: as the trained weights; LoRA: as the
 * frozen base under zero adapters), so both train the same function the PyTorch side loads; a bad combination of
 * options is refused before any child starts.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { benchScale, trainThroughput, type SideRuns } from '../../../src/bench/scale.ts';
import { starpoChild, type ChildSpec } from '../../../src/bench/scale-child.ts';
import { QWEN25_05B_CONFIG } from '../../../src/policy/io/published-configs.ts';
import { writeTinyModel } from '../rl/tiny-hf-model.ts';

const scratch = mkdtempSync(join(tmpdir(), 'starpo-bench-scale-test-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

test('bench scale --model: the starpo side trains the directory’s weights, full and under LoRA alike', async () => {
  const dir = await writeTinyModel(join(scratch, 'llama3'), 'llama3', { seed: 7 });
  const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
  const train = { mode: 'train', config, threads: 1, batch: 2, seq: 16, steps: 1 } as const;
  const [full, lora, random] = await Promise.all([
    starpoChild({ ...train, modelDir: dir }),
    starpoChild({ ...train, modelDir: dir, lora: true }),
    starpoChild(train),
  ]);
  // the first step's loss is the loaded model's: LoRA's zero B leaves the base's function, bit for bit in fp32
  // up to the order of the sums, and a random init is another function
  assert.ok(Math.abs(full.losses![0] - lora.losses![0]) < 1e-4, `${full.losses} vs ${lora.losses}`);
  assert.ok(Math.abs(full.losses![0] - random.losses![0]) > 1e-3, `${full.losses} vs ${random.losses}`);
  assert.equal(full.trainedParams, full.params);
  assert.ok(lora.trainedParams! < lora.params / 2, `${lora.trainedParams} of ${lora.params}`);
});

test('bench scale --model: one real model, so --models and --quick beside it are refused', async () => {
  await assert.rejects(benchScale({ model: true, models: 'qwen2.5-0.5b' }), /--model measures one real model/);
  await assert.rejects(benchScale({ model: join(scratch, 'missing') }), /missing: no such file or directory/);
});

test('a full train step is read against the MatMul peak; LoRA, which skips the frozen gradients, is not', () => {
  const spec: ChildSpec = { mode: 'train', config: QWEN25_05B_CONFIG, threads: 2, batch: 4, seq: 512 };
  const side = (stepSeconds: number[]) => ({ result: { initSeconds: 0, peakRssBytes: 0, params: 0, stepSeconds } });
  const runs = { starpo: side([90, 20, 10]), pytorch: side([30, 40]) } as unknown as SideRuns;
  const t = trainThroughput(spec, runs, 200) as { gflopPerStep: number; gflops: Record<string, number> };
  // 0.5B: ~6 FLOPs per parameter a token (the embedding is a lookup, the tied LM head a product) plus attention
  const approx = 6 * 494e6 * 2048;
  assert.ok(Math.abs(t.gflopPerStep * 1e9 - approx) / approx < 0.25, `${t.gflopPerStep} GFLOP`);
  // the best step after the first (which compiles): 10 s for starpo, 40 s for PyTorch
  assert.equal(t.gflops.starpo, Math.round((t.gflopPerStep / 10) * 10) / 10);
  assert.ok(Math.abs(t.gflops.starpo / t.gflops.pytorch - 4) < 0.01);
  assert.deepEqual(Object.keys(t), ['gflopPerStep', 'gflops', 'matmulPeakGflops', 'ofMatmulPeak']);
  assert.deepEqual(trainThroughput({ ...spec, lora: true }, runs, 200), {});
  const noPytorch = trainThroughput(spec, { starpo: runs.starpo }, null) as Record<string, Record<string, unknown>>;
  assert.deepEqual(noPytorch.ofMatmulPeak, { starpo: null, pytorch: null });
  assert.equal(noPytorch.gflops.pytorch, null);
});
