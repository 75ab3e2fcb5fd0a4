import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FILTERS, keepCount, type FilterParams } from '../../../src/rl/filters.ts';
import { planDynamicSampling } from '../../../src/rl/dynamic-sampling.ts';
import { outcomes, round, traj } from './fixtures.ts';

const P: FilterParams = { fraction: 0.5, band: [0, 0.8] };
// Group stds (sample, n−1): a 0, b 0.7071, c 1.4142, d 0.
const STDS = outcomes({ a: [0, 0], b: [0, 1], c: [0, 2], d: [1, 1] }).trajectories;

test('top-std keeps the ⌈fraction·G⌉ most varied groups, in order of appearance', () => {
  const { keptGroupIds, metrics } = FILTERS['top-std']({ trajectories: STDS, params: P });
  assert.deepEqual(keptGroupIds, ['b', 'c']);
  assert.deepEqual(round(Object.values(metrics)), [4, 2, 0.5, 0.53033, 1.06066]);
  assert.deepEqual(Object.keys(metrics), [
    'filter/groups',
    'filter/kept_groups',
    'filter/kept_fraction',
    'filter/in_group_std_all',
    'filter/in_group_std_kept',
  ]);
});

test('top-std breaks std ties by first appearance', () => {
  const tied = outcomes({ x: [0, 0.5], a: [0, 1], b: [1, 0], c: [3, 3] }).trajectories;
  assert.deepEqual(FILTERS['top-std']({ trajectories: tied, params: { ...P, fraction: 0.25 } }).keptGroupIds, ['a']);
  assert.deepEqual(FILTERS['bottom-std']({ trajectories: tied, params: { ...P, fraction: 0.25 } }).keptGroupIds, ['c']);
});

test('keep count rounds up, absorbs float error and keeps at least one group', () => {
  assert.deepEqual([keepCount(0.25, 8), keepCount(0.1, 30), keepCount(0.25, 3), keepCount(0.01, 5)], [2, 3, 1, 1]);
  assert.deepEqual([keepCount(1, 4), keepCount(0.25, 0)], [4, 0]);
});

test('bottom-std keeps the least varied groups', () => {
  assert.deepEqual(FILTERS['bottom-std']({ trajectories: STDS, params: P }).keptGroupIds, ['a', 'd']);
});

test('nonzero-std drops all-equal groups and groups of one', () => {
  const ts = outcomes({ a: [0.1, 0.1, 0.1], b: [0, 1], one: [5] }).trajectories;
  assert.deepEqual(FILTERS['nonzero-std']({ trajectories: ts, params: P }).keptGroupIds, ['b']);
});

test('accuracy-band keeps groups whose success rate lies strictly inside the band', () => {
  // success = reward > 0: rates a 0, b 0.5, c 0.8 (4 of 5), d 1.
  const ts = outcomes({ a: [0, 0], b: [0, 1], c: [1, 1, 1, 1, 0], d: [1, 1] }).trajectories;
  assert.deepEqual(FILTERS['accuracy-band']({ trajectories: ts, params: P }).keptGroupIds, ['b']);
});

test('none keeps every group; an empty batch keeps none', () => {
  assert.deepEqual(FILTERS.none({ trajectories: STDS, params: P }).keptGroupIds, ['a', 'b', 'c', 'd']);
  const empty = FILTERS['top-std']({ trajectories: [], params: P });
  assert.deepEqual([empty.keptGroupIds, empty.metrics['filter/kept_fraction']], [[], 0]);
});

test('dynamic sampling asks for the missing informative groups', () => {
  const plan = planDynamicSampling({ trajectories: STDS, targetGroups: 4, tries: 1, maxTries: 10 });
  assert.deepEqual([plan.action, plan.keptGroupIds, plan.groupsNeeded], ['sample-more', ['b', 'c'], 2]);
});

test('dynamic sampling is done once enough groups vary, truncating the surplus', () => {
  const plan = planDynamicSampling({ trajectories: STDS, targetGroups: 1, tries: 3, maxTries: 10 });
  assert.deepEqual([plan.action, plan.keptGroupIds, plan.groupsNeeded], ['done', ['b'], 0]);
});

test('dynamic sampling gives up after maxTries with what it found', () => {
  const ts = [traj('a', [[1, 0]]), traj('a', [[1, 0]])];
  const plan = planDynamicSampling({ trajectories: ts, targetGroups: 2, tries: 10, maxTries: 10 });
  assert.deepEqual([plan.action, plan.keptGroupIds, plan.metrics['dynamic_sampling/gave_up']], ['give-up', [], 1]);
});

test("snr-top-p keeps the largest-std groups until their sum reaches p·Σstd − ε (RAGEN-2's linear top-p)", () => {
  // Non-zero stds: c 1.4142, b 0.7071 (Σ 2.1213). p = 0.9: c alone (1.414) is below 1.899, so b joins.
  const keep = (topP: number) =>
    FILTERS['snr-top-p']({ trajectories: STDS, params: { ...P, topP, topPEps: 0.01 } }).keptGroupIds;
  assert.deepEqual(keep(0.9), ['b', 'c']);
  assert.deepEqual(keep(0.5), ['c']); // threshold 1.0507
  assert.deepEqual(keep(1), ['b', 'c']); // p = 1 keeps every group whose std is not 0
});

test('snr-top-p keeps nothing when every std is 0 or the stds sum to less than ε/p', () => {
  const flat = outcomes({ a: [1, 1], b: [0, 0] }).trajectories;
  assert.deepEqual(
    FILTERS['snr-top-p']({ trajectories: flat, params: { ...P, topP: 0.9, topPEps: 0.01 } }).keptGroupIds,
    [],
  );
  const faint = outcomes({ a: [0, 0.001], b: [0, 0] }).trajectories; // std 0.000707: threshold −0.0094, reached by none
  assert.deepEqual(
    FILTERS['snr-top-p']({ trajectories: faint, params: { ...P, topP: 0.9, topPEps: 0.01 } }).keptGroupIds,
    [],
  );
});
