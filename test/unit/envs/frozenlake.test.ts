import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FrozenLakeEnv, FROZENLAKE, type FrozenLakeConfig } from '../../../src/envs/frozenlake/index.ts';
import { LAKE_ACTIONS, generateLakeMap, parseLakeMap } from '../../../src/envs/frozenlake/map.ts';
import { bestAction, lakeValueIteration, successProbability } from '../../../src/envs/frozenlake/value-iteration.ts';
import { Prng } from '../../../src/envs/prng.ts';
import { slipDirection } from '../../../src/envs/frozenlake/env.ts';
import { bestSequence, planLakeTurns, planValue } from '../../../src/envs/frozenlake/turn-planner.ts';

const CONFIG: FrozenLakeConfig = { ...FROZENLAKE.defaults };

test('reaching the goal pays 1 and succeeds; a hole ends the episode with 0', () => {
  const env = new FrozenLakeEnv({ ...CONFIG, slippery: false });
  env.load(parseLakeMap(['PG', 'O_']), 0);
  const r = env.step('Right');
  assert.deepEqual([r.observation, r.reward, r.done, r.success], ['_√\nO_', 1, true, true]);
  env.load(parseLakeMap(['PG', 'O_']), 0);
  const fall = env.step('Down');
  assert.deepEqual([fall.observation, fall.reward, fall.done, fall.success], ['_G\nX_', 0, true, false]);
});

test('walking into the edge is not effective', () => {
  const env = new FrozenLakeEnv({ ...CONFIG, slippery: false });
  env.load(parseLakeMap(['P_', '_G']), 0);
  assert.deepEqual([env.step('Up').info.effective, env.render()], [false, 'P_\n_G']);
});

test('generated maps always have a path from start to goal (2000 seeds)', () => {
  for (let seed = 0; seed < 2000; seed++) {
    const map = generateLakeMap(new Prng(seed), 4, 0.8);
    // Independent check: without slips, value iteration over 16 actions reaches the goal for sure.
    assert.equal(successProbability(lakeValueIteration(map, 16, 0), map), 1, `seed ${seed}`);
    assert.notEqual(map.start, map.goal);
  }
});

test('slips follow 1/3 intended, 1/3 each perpendicular (30000 steps, tolerance ±0.015)', () => {
  const env = new FrozenLakeEnv({ ...CONFIG, maxSteps: 1_000_000 });
  const map = parseLakeMap(['___', '_P_', '__G']);
  const counts = { intended: 0, left: 0, right: 0 };
  let episode = 0;
  env.load(map, episode);
  for (let i = 0; i < 30000; i++) {
    if (env.done) env.load(map, ++episode);
    const intended = i % 4;
    const moved = LAKE_ACTIONS.indexOf(env.step(LAKE_ACTIONS[intended] as string).info.moved as 'Left');
    if (moved === intended) counts.intended++;
    else if (moved === (intended + 3) % 4) counts.left++;
    else if (moved === (intended + 1) % 4) counts.right++;
  }
  for (const n of Object.values(counts)) assert.ok(Math.abs(n / 30000 - 1 / 3) < 0.015, JSON.stringify(counts));
});

test('one slippery action next to the goal succeeds with probability exactly 1/3', () => {
  const map = parseLakeMap(['PG', '__']);
  assert.equal(successProbability(lakeValueIteration(map, 1), map), 1 / 3);
});

test('value iteration matches a Monte-Carlo run of its policy (20000 episodes, tolerance ±0.015)', () => {
  const map = parseLakeMap(['P__O', '_O__', '___O', 'O_G_']);
  const horizon = 10;
  const values = lakeValueIteration(map, horizon);
  const env = new FrozenLakeEnv(CONFIG);
  let wins = 0;
  for (let episode = 0; episode < 20000; episode++) {
    env.load(map, episode);
    for (let left = horizon; left > 0 && !env.done; left--) {
      const cell = env.snapshot().grid as string[];
      const here = cell.join('').indexOf('P');
      env.step(LAKE_ACTIONS[bestAction(values, map, here, left)] as string);
    }
    if (env.success) wins++;
  }
  const expected = successProbability(values, map);
  assert.ok(Math.abs(wins / 20000 - expected) < 0.015, `MC ${wins / 20000} vs VI ${expected}`);
});

test('seed 0 gives this map', () => {
  assert.equal(new FrozenLakeEnv(CONFIG).reset(0), '_P_G\nO___\n__O_\nO___');
});

test('the same seed gives the same map and the same slips', () => {
  const a = new FrozenLakeEnv(CONFIG);
  const b = new FrozenLakeEnv(CONFIG);
  const play = (env: FrozenLakeEnv) => [
    env.reset(42),
    ...['Up', 'Left', 'Down'].map((m) => (env.done ? '' : env.step(m).observation)),
  ];
  assert.deepEqual(play(a), play(b));
});

test('with one action per turn the turn planner equals value iteration', () => {
  const map = parseLakeMap(['P__O', '_O__', '___O', 'O_G_']);
  const plan = planLakeTurns(map, 5, 10, 1);
  assert.ok(
    Math.abs(planValue(plan, 5, 10, map.start, 16) - successProbability(lakeValueIteration(map, 5), map)) < 1e-12,
  );
});

test("the turn planner's blind sequences reach its value in a Monte-Carlo run (20000 episodes, ±0.015)", () => {
  const map = parseLakeMap(['P__O', '_O__', '___O', 'O_G_']);
  const plan = planLakeTurns(map, 5, 10, 5);
  const env = new FrozenLakeEnv(CONFIG);
  let wins = 0;
  for (let episode = 0; episode < 20000; episode++) {
    env.load(map, episode);
    for (let turn = 5, left = 10; turn > 0 && left > 0 && !env.done; turn--) {
      const here = (env.snapshot().grid as string[]).join('').indexOf('P');
      for (const a of bestSequence(plan, turn, left, here, 16))
        if (!env.done && left-- > 0) env.step(LAKE_ACTIONS[a] as string);
    }
    if (env.success) wins++;
  }
  const expected = planValue(plan, 5, 10, map.start, 16);
  assert.ok(expected < successProbability(lakeValueIteration(map, 10), map));
  assert.ok(Math.abs(wins / 20000 - expected) < 0.015, `MC ${wins / 20000} vs plan ${expected}`);
});

test("the oracle gives the turn-planned success and the closed-loop ceiling of the seed's map", () => {
  const map = generateLakeMap(new Prng(3), 4, 0.8);
  const { success, detail } = FROZENLAKE.oracle!(CONFIG, 3);
  assert.equal(success, planValue(planLakeTurns(map, 5, 10, 5), 5, 10, map.start, 16));
  assert.equal(detail.closedLoop, successProbability(lakeValueIteration(map, 10), map));
});

test('at slip probability 2/3 a draw slips exactly as ⌊3u⌋ − 1 did (100000 draws)', () => {
  const a = new Prng(5, 1);
  const b = new Prng(5, 1);
  for (let i = 0; i < 100000; i++) assert.equal(slipDirection(a.float(), 2 / 3), b.int(3) - 1);
});

test('slip probability 0.02: one action next to the goal succeeds with probability 0.98, 0 is deterministic', () => {
  const map = parseLakeMap(['PG', '__']);
  assert.equal(successProbability(lakeValueIteration(map, 1, 0.02), map), 0.98);
  assert.equal(successProbability(lakeValueIteration(map, 1, 0), map), 1);
  const oracle = FROZENLAKE.oracle!({ ...CONFIG, slipProbability: 0.02 }, 3);
  assert.ok(oracle.success > FROZENLAKE.oracle!(CONFIG, 3).success);
});

test('at slip probability 0.02 about 1% of moves go each perpendicular way (30000 steps, ±0.003)', () => {
  const env = new FrozenLakeEnv({ ...CONFIG, slipProbability: 0.02 });
  const map = parseLakeMap(['____', '____', '___P', '___G']);
  const slips = { left: 0, right: 0 };
  for (let i = 0; i < 30000; i++) {
    env.load(map, i);
    const moved = LAKE_ACTIONS.indexOf(env.step('Left').info.moved as 'Left');
    if (moved === 3) slips.left++; // Left − 1 = Up
    if (moved === 1) slips.right++;
  }
  for (const n of Object.values(slips)) assert.ok(Math.abs(n / 30000 - 0.01) < 0.003, JSON.stringify(slips));
});

test("grid-coord renders RAGEN-2's coordinate list above the grid; the start stays listed", () => {
  const env = new FrozenLakeEnv({ ...CONFIG, slippery: false, observation: 'grid-coord' });
  env.load(parseLakeMap(['P_O_', '____', '_O__', '__G_']), 0);
  const after = env.step('Down').observation;
  assert.equal(
    after,
    'Coordinates: \nBoard size: 4 rows x 4 cols (zero-indexed).\nStart: (0, 0)\nGoal: (3, 2)\n' +
      'Player: (1, 0)\nHoles: (0, 2), (2, 1)\nGrid Map: \n__O_\nP___\n_O__\n__G_',
  );
  env.step('Right');
  env.step('Down');
  assert.match(env.render(), /\nPlayer in hole: \(2, 1\)\nHoles: \(0, 2\), \(2, 1\)\n/);
  assert.match(
    env.describe().instruction,
    /coordinates of the start, the goal, the player and the holes, .* \(3, 3\)\.$/,
  );
});
