import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEnv, resolveEnvConfig } from '../../../src/envs/index.ts';
import { finalObservation, withFinalStates } from '../../../src/report/final-state.ts';
import type { TrajectoryView } from '../../../src/report/model.ts';

/** Plays `turns` of actions on a fresh environment and records it as the report sees a trajectory. */
function played(env: string, seed: number, turns: string[][]): { t: TrajectoryView; end: string } {
  const game = createEnv(env);
  game.reset(seed);
  const views = turns.map((actions) => {
    const observation = game.anchor();
    for (const a of actions) if (!game.done) game.step(a);
    return { observation, response: '', actions, envReward: 0, formatPenalty: 0, toolCalls: [] };
  });
  const t = {
    iteration: 1,
    split: 'train',
    group: 0,
    rollout: 0,
    seed,
    return: 0,
    success: game.success,
    turns: views,
    tokens: null,
  };
  return { t, end: game.anchor() };
}

test('the final state is re-enacted from the seed (deterministic and stochastic environments)', () => {
  for (const env of ['sokoban', 'frozenlake']) {
    const { t, end } = played(env, 7, [['Up', 'Left'], ['Down']]);
    assert.equal(finalObservation(resolveEnvConfig(env), t), end, env);
  }
});

test('no final state is claimed when the re-enactment disagrees with a recorded state', () => {
  const { t } = played('sokoban', 7, [['Up'], ['Left']]);
  t.turns[1].observation = 'not this';
  assert.equal(finalObservation(resolveEnvConfig('sokoban'), t), undefined);
  assert.deepEqual(withFinalStates(resolveEnvConfig('sokoban'), true, [t]), [t]);
  assert.deepEqual(withFinalStates(null, true, [t]), [t]);
});
