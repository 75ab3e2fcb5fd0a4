import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assemble } from '../../../src/rl/assemble.ts';
import { takeRows } from '../../../src/rl/batch.ts';
import { resolveConfig } from '../../../src/rl/config.ts';
import { actorStepSkipped, scoreStage } from '../../../src/rl/stages/score.ts';
import type { AssembledBatch } from '../../../src/rl/assemble.ts';
import { endAtLastTrained, keepRows } from '../../../src/rl/kept-rows.ts';
import { rolloutSpec } from '../../../src/rl/episode-source.ts';
import { behaviourGap } from '../../../src/rl/metrics.ts';
import { closeModels, createModels } from '../../../src/run/models.ts';
import { rollout } from '../../../src/rl/rollout.ts';
import { resolveRunModel } from '../../../src/rl/run-model.ts';

const TINY = ['modelLayers=1', 'modelHidden=32', 'modelFfn=64', 'threads=1', 'klCoef=0.001', 'maxTurns=2'];
const c = resolveConfig({ overrides: TINY });

async function played(c = resolveConfig({ overrides: TINY })) {
  const run = await resolveRunModel(c);
  const models = createModels(c, run.modelConfig, run.tokenizer);
  const trajectories = await rollout(rolloutSpec(c, run.chat, [3, 4], 3, 1, 9), models.actor, run.tokenizer);
  return { models, all: assemble(trajectories) };
}

test('scoring only the trained rows gives each of them the numbers scoring every row gives it', async () => {
  // Filters keep whole groups: a group's rows are packed alike (one prompt, computed once) either way. Rows apart
  // (packPrefixes off) a row's numbers do not depend on any other row of the call.
  for (const [packPrefixes, rows] of [
    ['on', [3, 4, 5]],
    ['off', [1, 3, 4]],
  ] as const) {
    const cfg = { ...c, packPrefixes };
    const { models, all } = await played(cfg);
    const [kept, every] = [
      await scoreStage(cfg, all, [...rows], models),
      await scoreStage(cfg, all, [0, 1, 2, 3, 4, 5], models),
    ];
    for (const k of ['logprobs', 'values', 'refLogprobs'] as const)
      assert.deepEqual(kept[k], takeRows(every[k]!, all.batch.T, [...rows]), `${k}, packPrefixes ${packPrefixes}`);
    // sampled by the same weights
    assert.ok(kept.metrics['logprobs/behaviour_gap_max'] < 1e-4, JSON.stringify(kept.metrics));
    await closeModels(models);
  }
});

test('kept rows attend up to their last trained token only, with the same numbers on every trained token', async () => {
  const { models, all } = await played();
  const rows = [0, 1, 2, 3, 4, 5];
  const T = all.batch.T;
  const kept = keepRows(all, rows);
  const whole = takeRows(all.tokens.attentionMask, T, rows);
  let tails = 0;
  rows.forEach((_, b) => {
    const last = kept.tokens.lossMask.subarray(b * T, (b + 1) * T).findLastIndex((x) => x !== 0);
    for (let t = 0; t < T; t++) {
      const i = b * T + t;
      assert.equal(kept.tokens.attentionMask[i], t <= last ? whole[i] : 0, `row ${b} token ${t}`);
      if (t > last && whole[i] === 1) tails++;
    }
  });
  assert.ok(tails > 0, 'the rows end in untrained tokens (the last observation, the closing template)');
  const [cut, full] = [
    await models.actor.score(kept.tokens),
    await models.actor.score({ ...kept.tokens, attentionMask: whole }),
  ];
  kept.tokens.lossMask.forEach((m, i) => {
    if (m === 0) return;
    const [a, b] = [cut.logprobs![i], full.logprobs![i]];
    assert.ok(Math.abs(a - b) <= 1e-5 * Math.max(1, Math.abs(b)), `logprob ${i}: ${a} vs ${b}`);
  });
  const none = Float32Array.of(1, 1, 1, 0, 1, 1, 0, 0);
  assert.deepEqual(
    Array.from(endAtLastTrained(none, Float32Array.of(0, 1, 0, 0, 0, 0, 0, 0), 4)),
    [1, 1, 0, 0, 1, 1, 0, 0],
    'cut after token 1 in the first row; the second row, with nothing trained, left whole',
  );
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

/** The batch with each trajectory's turns paying `reward(row)` and no format penalty. */
function withRewards(all: AssembledBatch, reward: (row: number) => number): AssembledBatch {
  const trajectories = all.batch.trajectories.map((t, i) => ({
    ...t,
    turns: t.turns.map((u) => ({ ...u, envReward: reward(i), formatPenalty: 0 })),
  }));
  return { ...all, batch: { ...all.batch, trajectories } };
}

test('an iteration whose update will skip the actor step is not scored: no critic, and every group agrees', async () => {
  const grpo = resolveConfig({ overrides: [...TINY, 'critic=false', 'advantage=grpo', 'filter=none'] });
  const { models, all } = await played(grpo);
  let scores = 0;
  for (const m of [models.actor, models.ref!]) {
    const score = m.score.bind(m);
    m.score = (...args) => (scores++, score(...args));
  }
  const rows = [0, 1, 2, 3, 4, 5];
  const agreed = await scoreStage(
    grpo,
    withRewards(all, () => 0.5),
    rows,
    models,
  );
  assert.equal(scores, 0);
  assert.deepEqual(agreed, { logprobs: takeRows(all.samplingLogprobs, all.batch.T, rows), metrics: {} });

  const oneWins = withRewards(all, (row) => (row === 4 ? 1 : 0));
  const scored = await scoreStage(grpo, oneWins, rows, models);
  assert.equal(scores, 2);
  assert.ok(scored.refLogprobs && 'logprobs/behaviour_gap_max' in scored.metrics);
  // Only the kept rows count: group 0 (rows 0-2) has no winner, so kept alone it carries no signal.
  assert.equal(actorStepSkipped(grpo, oneWins, keepRows(oneWins, [0, 1, 2]), false), true);
  assert.equal(actorStepSkipped(grpo, oneWins, keepRows(oneWins, rows), false), false);
  // A critic trains whatever the advantages, so with one every iteration is scored; skipNoSignal=false scores too.
  const flat = withRewards(all, () => 0);
  assert.equal(actorStepSkipped(grpo, flat, keepRows(flat, rows), true), false);
  assert.equal(actorStepSkipped({ ...grpo, skipNoSignal: false }, flat, keepRows(flat, rows), false), false);
  await closeModels(models);
});
