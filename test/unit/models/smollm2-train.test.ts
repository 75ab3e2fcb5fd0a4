/**
 * The real SmolLM2-135M-Instruct trained by the embedded driver from `--model smollm2-135m-instruct` (the
 * packaged name, resolved through the cache): full fine-tuning and LoRA, each stopped after iteration 1 and
 * resumed, must end bitwise equal to an uninterrupted run; the trained actor exports as a model directory
 * that `--model` loads again.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { getNamedModel } from '../../../src/models/named.ts';
import { openModelDirectory } from '../../../src/policy/io/model-dir.ts';
import { resolveConfig } from '../../../src/rl/config.ts';
import { trainEmbedded } from '../../../src/embedded/driver.ts';
import { exportCheckpoint } from '../../../src/run/export.ts';

await getNamedModel('smollm2-135m-instruct');
const scratch = mkdtempSync(join(tmpdir(), 'starpo-smollm2-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * Bandit, 2 iterations of 1 group × 2, 6-token answers, one thread (bitwise). The compact prompt: what is proven here
 * does not depend on the words, and RAGEN's full one doubles every sequence the update trains on (94 → 78 s a case).
 */
const SMALL = [
  'model=smollm2-135m-instruct',
  'env=bandit',
  'template=compact',
  'iterations=2',
  'envGroups=1',
  'groupSize=2',
  'maxResponseTokens=6',
  'miniBatchSize=2',
  'valSeeds=1',
  'valEvery=1',
  'checkpointEvery=1',
  'modelContext=512',
  'threads=1',
  'advantage=grpo',
  'critic=false',
  'lrActor=1e-5',
  'skipNoSignal=false', // every reward is the format penalty: without this no step would train
];

const file = (root: string, iteration: number, name: string) =>
  readFileSync(join(root, 'r', 'checkpoints', 'main', String(iteration).padStart(8, '0'), name));

for (const [name, extra] of [
  ['full fine-tuning', []],
  ['LoRA', ['loraRank=4', 'loraAlpha=8']],
] as const) {
  test(
    `SmolLM2 ${name}: stopped after iteration 1 and resumed, the run ends bitwise equal`,
    { timeout: 900_000 },
    async () => {
      const config = resolveConfig({ overrides: [...SMALL, ...extra] });
      assert.equal(config.model, 'smollm2-135m-instruct', 'the config keeps the name, not a machine path');
      const [straight, crashed] = ['straight', 'crashed'].map((d) => mkdtempSync(join(scratch, `${d}-`)));
      await trainEmbedded({ root: straight, runId: 'r', config });
      await trainEmbedded({ root: crashed, runId: 'r', config, stopAfter: 1 });
      await trainEmbedded({ root: crashed, runId: 'r', resume: true });
      const weights = 'actor.model.safetensors';
      assert.ok(!file(straight, 0, weights).equals(file(straight, 2, weights)), 'two iterations changed no weight');
      for (const f of [weights, 'actor.training_state.safetensors'])
        assert.ok(file(straight, 2, f).equals(file(crashed, 2, f)), `${f} differs`);
      const out = join(scratch, `export-${extra.length}`);
      await exportCheckpoint({ checkpoint: join(straight, 'r'), out });
      const exported = await openModelDirectory(out);
      assert.equal(exported.config.numLayers, 30);
      assert.match(exported.assets['tokenizer_config.json']!, /chat_template/);
    },
  );
}
