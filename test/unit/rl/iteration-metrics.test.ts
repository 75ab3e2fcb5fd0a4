import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveConfig } from '../../../src/rl/config.ts';
import { runIteration } from '../../../src/embedded/iteration.ts';
import { createModels, closeModels } from '../../../src/run/models.ts';
import { scratchModelConfig } from '../../../src/rl/run-model.ts';
import { COMPACT_CHAT } from '../../../src/agent/chat-format.ts';
import { scratchTokenizer } from '../../../src/rl/vocabulary.ts';
import { sftWarmup } from '../../../src/rl/sft.ts';
import { envEpisodes } from '../../../src/rl/episode-source.ts';

test('with a critic and a filter, outcome metrics describe every trajectory, not only the kept groups', async () => {
  const tokenizer = scratchTokenizer();
  const c = resolveConfig({
    preset: 'starpo-s',
    overrides: [
      'env=bandit',
      'envGroups=4',
      'groupSize=2',
      'miniBatchSize=2',
      'filterFraction=0.25',
      'threads=1',
      'modelLayers=1',
      'modelHidden=32',
      'modelFfn=64',
      'sftSteps=30',
      'sftPolicy=random',
      'sftEpisodes=32',
      'sftLr=3e-3',
    ],
  });
  const models = createModels(c, scratchModelConfig(c, tokenizer), tokenizer);
  const text = { tokenizer, chat: COMPACT_CHAT };
  await sftWarmup(c, models.actor, text); // answers in the format, so returns differ between groups
  const r = await runIteration(c, 1, models, envEpisodes(c, models.actor, text));
  await closeModels(models);
  const returns = r.trajectories.map((t) => t.return);
  assert.ok(new Set(returns).size > 1, 'the check needs returns that differ');
  assert.equal(r.trajectories.length, 8);
  assert.equal(r.metrics['batch/trained_trajectories'], 2);
  assert.ok(Math.abs(r.metrics['return/mean'] - returns.reduce((a, b) => a + b, 0) / 8) < 1e-9);
  assert.equal(r.metrics.success_rate, r.trajectories.filter((t) => t.success).length / 8);
  assert.ok(Number.isFinite(r.metrics['values/explained_variance']));
});
