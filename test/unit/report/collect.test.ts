import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RunCollector, sampleIterations } from '../../../src/report/collect.ts';
import { iteration, run, trajectory, warning } from './fixtures.ts';

const noEnv = { env: null, legend: [], oracle: null };

test('sampleIterations keeps all when few, else spreads evenly with the first and the last', () => {
  assert.deepEqual(sampleIterations([3, 1, 2], 5), [1, 2, 3]);
  assert.deepEqual(sampleIterations([1, 2, 3, 4, 5, 6, 7, 8, 9], 3), [1, 5, 9]);
  assert.deepEqual(sampleIterations([1, 2, 3, 4], 1), [4]);
  assert.deepEqual(sampleIterations([1, 2, 3], 0), []);
});

test('a run report holds iterations in order, warnings and the config', () => {
  const c = new RunCollector('r');
  const events = [run(), iteration(2, { success_rate: 0.5 }), warning(2), iteration(1, { success_rate: 0.25 })];
  for (const e of events) c.add(e);
  const report = c.finish(noEnv);
  assert.deepEqual(
    report.iterations.map((p) => [p.iteration, p.metrics.success_rate, p.timingsMs.rollout]),
    [
      [1, 0.25, 100],
      [2, 0.5, 200],
    ],
  );
  assert.deepEqual(report.warnings, [{ iteration: 2, message: 'entropy fell', evidence: { entropyDrop: 0.5 } }]);
  assert.equal(report.env, 'sokoban');
  assert.equal(report.plannedIterations, 4);
  assert.equal(report.lastIteration, 2);
});

test('trajectories are kept for the sampled iterations only, sorted by split, group and rollout', () => {
  const c = new RunCollector('r', { trajectoryIterations: 2 });
  for (const i of [1, 2, 3]) {
    for (const e of [trajectory(i, 1, 0), trajectory(i, 0, 1, 'val'), trajectory(i, 0, 0)]) c.add(e);
  }
  const report = c.finish(noEnv);
  assert.deepEqual(report.trajectoryIterations, [1, 3]);
  assert.equal(report.trajectoryIterationsTotal, 3);
  assert.deepEqual(
    report.trajectories.filter((t) => t.iteration === 3).map((t) => [t.split, t.group, t.rollout]),
    [
      ['train', 0, 0],
      ['train', 1, 0],
      ['val', 0, 1],
    ],
  );
  assert.deepEqual(report.trajectories[0].turns[0].toolCalls, [
    { name: 'python', input: 'print(2)', output: '2', ok: true, executed: true },
  ]);
});

test('before any RunEvent the fallback config.json is used; an empty log gives an empty report', () => {
  const withFile = new RunCollector('r', { fallbackConfigJson: '{"env":"frozenlake","iterations":9}' }).finish(noEnv);
  assert.deepEqual([withFile.env, withFile.plannedIterations, withFile.lastIteration], ['frozenlake', 9, 0]);
  const empty = new RunCollector('r').finish(noEnv);
  assert.deepEqual([empty.env, empty.plannedIterations, empty.iterations, empty.trajectories], ['', 0, [], []]);
});

test('a run report carries the recorded env-spec id and the lineages onCollapse=fork started, with the reason', () => {
  const c = new RunCollector('r');
  const forked = {
    ...run(),
    lineageId: 'f1-3',
    action: 'FORKED' as const,
    parentLineageId: 'main',
    fromIteration: 3,
    reason: 'Echo Trap suspected at iteration 6; lr × 0.5',
    forks: 1,
  };
  for (const e of [run(), { ...iteration(1, {}), envSpecId: 'sokoban-a8f82da8' }, forked]) c.add(e);
  const report = c.finish(noEnv);
  assert.equal(report.envSpecId, 'sokoban-a8f82da8');
  assert.deepEqual(report.forks, [
    {
      lineageId: 'f1-3',
      parentLineageId: 'main',
      fromIteration: 3,
      forks: 1,
      reason: 'Echo Trap suspected at iteration 6; lr × 0.5',
    },
  ]);
  assert.equal(new RunCollector('old').finish(noEnv).envSpecId, '');
});
