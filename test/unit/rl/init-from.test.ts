import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveConfig } from '../../../src/rl/config.ts';
import { trainEmbedded } from '../../../src/embedded/driver.ts';
import { ConfigError } from '../../../src/errors.ts';

const TINY = [
  'env=bandit',
  'envGroups=2',
  'groupSize=4',
  'miniBatchSize=4',
  'threads=1',
  'valSeeds=4',
  'modelLayers=1',
  'modelHidden=32',
  'modelFfn=64',
  'maxResponseTokens=4',
  'sftPolicy=random',
  'sftEpisodes=16',
  'sftBatchSize=8',
];

const actor = (root: string, run: string, iteration: number) =>
  readFileSync(join(root, run, 'checkpoints', 'main', String(iteration).padStart(8, '0'), 'actor.model.safetensors'));

test(
  'a new run initialised from a warm-start run starts with its actor, under its own config',
  { timeout: 120_000 },
  async () => {
    const root = mkdtempSync(join(tmpdir(), 'starpo-init-'));
    await trainEmbedded({
      root,
      runId: 'sft',
      config: resolveConfig({ overrides: [...TINY, 'sftSteps=10', 'sftLr=3e-3'] }),
      stopAfter: 0,
    });
    // Another preset and seed; sftSteps stays in the config but the checkpoint replaces the warm-start.
    // skipNoSignal=false: one iteration of a tiny model may earn no advantage, and the test must see a step.
    const rl = resolveConfig({
      preset: 'grpo',
      overrides: [...TINY, 'seed=7', 'sftSteps=0', 'iterations=1', 'skipNoSignal=false'],
    });
    await trainEmbedded({ root, runId: 'rl', config: rl, initFrom: join(root, 'sft') });
    assert.ok(actor(root, 'rl', 0).equals(actor(root, 'sft', 0)), 'checkpoint 0 holds the initialising actor');
    assert.ok(!actor(root, 'rl', 1).equals(actor(root, 'sft', 0)), 'and RL trains on from it');
    const fresh = resolveConfig({ preset: 'grpo', overrides: [...TINY, 'seed=7', 'sftSteps=0', 'iterations=1'] });
    await trainEmbedded({ root, runId: 'fresh', config: fresh });
    assert.ok(!actor(root, 'fresh', 0).equals(actor(root, 'sft', 0)));
  },
);

test('initialising from a run with another model is refused, naming what differs', { timeout: 60_000 }, async () => {
  const root = mkdtempSync(join(tmpdir(), 'starpo-init-'));
  await trainEmbedded({
    root,
    runId: 'sft',
    config: resolveConfig({ overrides: [...TINY, 'sftSteps=1'] }),
    stopAfter: 0,
  });
  const wider = resolveConfig({ overrides: [...TINY, 'modelHidden=64', 'iterations=1'] });
  await assert.rejects(
    trainEmbedded({ root, runId: 'rl', config: wider, initFrom: join(root, 'sft') }),
    (err: unknown) => err instanceof ConfigError && /modelHidden 32 there, 64 here/.test(err.message),
  );
});
