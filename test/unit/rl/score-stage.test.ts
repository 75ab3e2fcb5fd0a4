import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assemble } from '../../../src/rl/assemble.ts';
import { takeRows } from '../../../src/rl/batch.ts';
import { resolveConfig } from '../../../src/rl/config.ts';
import { scoreStage } from '../../../src/rl/stages/score.ts';
import { rolloutSpec } from '../../../src/rl/episode-source.ts';
import { behaviourGap } from '../../../src/rl/metrics.ts';
import { closeModels, createModels } from '../../../src/run/models.ts';
import { rollout } from '../../../src/rl/rollout.ts';
import { resolveRunModel } from '../../../src/rl/run-model.ts';

const c = resolveConfig({
  overrides: ['modelLayers=1', 'modelHidden=32', 'modelFfn=64', 'threads=1', 'klCoef=0.001', 'maxTurns=2'],
});

async function played() {
  const run = await resolveRunModel(c);
  const models = createModels(c, run.modelConfig, run.tokenizer);
  const trajectories = await rollout(rolloutSpec(c, run.chat, [3, 4], 3, 1, 9), models.actor, run.tokenizer);
  return { models, all: assemble(trajectories) };
}

test('scoring only the trained rows gives each of them the numbers scoring every row gives it', async () => {
  const { models, all } = await played();
  const rows = [1, 3, 4];
  const [kept, every] = [await scoreStage(c, all, rows, models), await scoreStage(c, all, [0, 1, 2, 3, 4, 5], models)];
  for (const k of ['logprobs', 'values', 'refLogprobs'] as const)
    assert.deepEqual(kept[k], takeRows(every[k]!, all.batch.T, rows), k);
  // sampled by the same weights
  assert.ok(kept.metrics['logprobs/behaviour_gap_max'] < 1e-4, JSON.stringify(kept.metrics));
  await closeModels(models);
});

test('with oldLogprobs = behaviour the old log-probs are those the rollout sampled with', async () => {
  const { models, all } = await played();
  const scored = await scoreStage({ ...c, oldLogprobs: 'behaviour' }, all, [2, 5], models);
  assert.deepEqual(scored.logprobs, takeRows(all.samplingLogprobs, all.batch.T, [2, 5]));
  assert.deepEqual(scored.metrics, {});
  await closeModels(models);
});

test('the behaviour gap is the mean and max |recomputed − sampled| over the mask', () => {
  const gap = behaviourGap([0.5, -1, -2, 9], [0.25, -1.5, -2, 0], [1, 1, 1, 0]);
  assert.deepEqual(gap, { 'logprobs/behaviour_gap_mean': 0.25, 'logprobs/behaviour_gap_max': 0.5 });
});
