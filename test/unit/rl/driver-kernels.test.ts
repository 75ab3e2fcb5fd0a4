import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pendingCheckpoints } from '../../../src/rl/async-schedule.ts';
import { resolveConfig } from '../../../src/rl/config.ts';
import { modelInits } from '../../../src/run/models.ts';
import { scratchModelConfig } from '../../../src/rl/run-model.ts';
import { sampleRounds } from '../../../src/rl/sampling-rounds.ts';
import { validatesAt } from '../../../src/rl/val-schedule.ts';
import { scratchTokenizer } from '../../../src/rl/vocabulary.ts';

test('without dynamic sampling one round plays groups 0 … envGroups − 1 and no plan is asked for', async () => {
  const played: number[][] = [];
  const plan = await sampleRounds(
    { envGroups: 3 },
    async (g) => void played.push(g),
    () => assert.fail('no plan'),
  );
  assert.equal(plan, null);
  assert.deepEqual(played, [[0, 1, 2]]);
});

test('dynamic sampling plays new group numbers each round until the plan stops asking', async () => {
  const played: [number[], number][] = [];
  const plans = [
    { action: 'sample-more', groupsNeeded: 2 },
    { action: 'sample-more', groupsNeeded: 1 },
    { action: 'train', groupsNeeded: 0 },
  ];
  const last = await sampleRounds(
    { envGroups: 2, dynamicSampling: true },
    async (g, r) => void played.push([g, r]),
    (tries) => plans[tries - 1],
  );
  assert.deepEqual(played, [
    [[0, 1], 0],
    [[2, 3], 1],
    [[4], 2],
  ]);
  assert.equal(last, plans[2]);
});

test('validation runs every valEvery-th iteration and at the last one (valEvery 0: the last only)', () => {
  assert.deepEqual(
    [1, 2, 3, 4, 5].filter((i) => validatesAt({ iterations: 5, valEvery: 2 }, i)),
    [2, 4, 5],
  );
  assert.deepEqual(
    [1, 2, 3].filter((i) => validatesAt({ iterations: 3, valEvery: 0 }, i)),
    [3],
  );
});

test('a checkpoint names the checkpoints of its pending versions, and an unknown version is an error', () => {
  const known = new Map([
    [1, 'main@1'],
    [2, 'main@2'],
    [3, 'main@3'],
  ]);
  assert.deepEqual(pendingCheckpoints(2, 3, known), ['main@1', 'main@2']);
  assert.equal(pendingCheckpoints(0, 3, known), undefined);
  assert.throws(() => pendingCheckpoints(2, 5, known), /policy version 4 has no known checkpoint/);
});

test('a run has an actor (seed, KV cache), a critic (seed + 1) and a KL reference (the actor seed)', () => {
  const c = resolveConfig({ overrides: ['seed=7', 'critic=true', 'klCoef=0.01', 'kvCacheMb=2', 'threads=1'] });
  const inits = modelInits(c, scratchModelConfig(c, scratchTokenizer()), 'cpu');
  const summary = inits.map((i) => [i.name, i.options.role, i.options.seed, i.options.kvCacheBytes ?? 0, i.samples]);
  const expected = [
    ['actor', 'actor', 7, 2 * 2 ** 20, true],
    ['critic', 'critic', 8, 0, false],
    ['ref', 'actor', 7, 0, false],
  ];
  assert.deepEqual(summary, expected);
  assert.deepEqual(
    modelInits(c, inits[0].options.config, 'cpu', 'actor').map((i) => i.name),
    ['actor'],
  );
});
