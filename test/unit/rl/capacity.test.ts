import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../../src/errors.ts';
import { checkCapacity, memoryNeeds } from '../../../src/rl/capacity.ts';
import { resolveConfig } from '../../../src/rl/config.ts';
import { resolveRunModel } from '../../../src/rl/run-model.ts';

// 1 layer, width 8, one head: 106×8 embedding (tied) + 8 + 8×24 qkv + 64 o + 8 + 3×64 MLP + 8 final norm = 1320.
const c = resolveConfig({
  overrides: ['modelLayers=1', 'modelHidden=8', 'modelHeads=1', 'modelKvHeads=1', 'modelFfn=8'],
});
const { modelConfig } = await resolveRunModel(c);

test("memory needs count weights and AdamW moments of actor and critic, and the largest batch's KV cache", () => {
  assert.deepEqual(memoryNeeds(c, modelConfig, null), {
    parameters: 1320,
    modelBytes: 4 * 1320 * 6,
    kvCacheBytes: 256 * 24 * (2 * 1 * 1 * 8 * 4),
    batch: { rows: 256, field: 'valSeeds' },
  });
  assert.equal(memoryNeeds(c, modelConfig, null, { training: false }).modelBytes, 4 * 1320);
});

test('a model that cannot fit is refused with its size, naming the field', () => {
  assert.throws(
    () => checkCapacity(c, modelConfig, null, {}, 30_000),
    (e: unknown) =>
      e instanceof ConfigError &&
      e.message ===
        'config modelHidden: a 1.3k-parameter model (1 layers, hidden 8, ffn 8, vocab 106) needs at least ' +
          "30.9 KiB for its weights and optimizer state, more than this machine's 29.3 KiB of memory",
  );
});

test('a batch whose KV cache cannot fit beside the model is refused, naming the batch field', () => {
  assert.throws(
    () => checkCapacity(c, modelConfig, null, {}, 400_000),
    (e: unknown) =>
      e instanceof ConfigError &&
      e.message ===
        'config valSeeds: 256 sequences generated at once need at least 384.0 KiB of KV cache beside 30.9 KiB ' +
          "of model state, more than this machine's 390.6 KiB of memory",
  );
  assert.doesNotThrow(() => checkCapacity(c, modelConfig, null, {}, 500_000));
});
