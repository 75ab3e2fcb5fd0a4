import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildCharts, CHART_SPECS } from '../../../src/report/charts.ts';
import { RunCollector } from '../../../src/report/collect.ts';
import type { ChartModel, OracleCeiling, RunReport } from '../../../src/report/model.ts';
import type { StarpoEvent } from '../../../src/events/index.ts';
import { iteration, run, warning } from './fixtures.ts';

function report(runId: string, events: StarpoEvent[], oracle: OracleCeiling | null = null): RunReport {
  const c = new RunCollector(runId);
  for (const e of events) c.add(e);
  return c.finish({ env: null, legend: [], oracle });
}

const chart = (charts: ChartModel[], id: string) => charts.find((c) => c.id === id)!;
const counts = (c: ChartModel) => Object.fromEntries(c.series.map((s) => [s.label, s.points.length]));

const three = report(
  'a',
  [
    run('a'),
    iteration(1, { success_rate: 0 }),
    iteration(2, { success_rate: 0.5, 'val/success_rate': 0.25 }),
    iteration(3, { success_rate: 1, 'val/success_rate': 0.75, 'critic/value_loss': 2 }),
    warning(2, 'a'),
  ],
  { successRate: 0.9, seeds: 8 },
);

test('every chart of the table is built, in order', () => {
  assert.deepEqual(
    buildCharts([three]).map((c) => c.id),
    CHART_SPECS.map((s) => s.id),
  );
});

test('success has a point per iteration (train), per validated iteration (val) and a 2-point oracle line', () => {
  const success = chart(buildCharts([three]), 'success');
  assert.deepEqual(counts(success), { train: 3, validation: 2, 'oracle ceiling (8 val seeds)': 2 });
  assert.deepEqual(success.series[2].points, [
    [1, 0.9],
    [3, 0.9],
  ]);
  assert.deepEqual(success.series[1].points, [
    [2, 0.25],
    [3, 0.75],
  ]);
});

test('a metric a run lacks gives an empty series; stage timings get one series per stage', () => {
  const charts = buildCharts([three]);
  assert.deepEqual(counts(chart(charts, 'value-loss')), { critic: 1 });
  assert.deepEqual(counts(chart(charts, 'kl')), { 'approx KL (old → new)': 0, 'KL to reference': 0 });
  assert.deepEqual(
    chart(charts, 'stage-timings').series.map((s) => [s.label, s.points]),
    [
      [
        'rollout',
        [
          [1, 100],
          [2, 200],
          [3, 300],
        ],
      ],
      [
        'update',
        [
          [1, 50],
          [2, 50],
          [3, 50],
        ],
      ],
    ],
  );
});

test('echo-trap warnings mark every chart', () => {
  for (const c of buildCharts([three])) {
    assert.deepEqual(c.markers, [{ run: 'a', iteration: 2, message: 'entropy fell' }]);
  }
});

test('several runs share a chart, labelled by run', () => {
  const other = report('b', [run('b'), iteration(1, { success_rate: 0.5 })]);
  const success = chart(buildCharts([three, other]), 'success');
  assert.deepEqual(counts(success), {
    'a · train': 3,
    'a · validation': 2,
    'a · oracle ceiling (8 val seeds)': 2,
    'b · train': 1,
    'b · validation': 0,
  });
  assert.deepEqual([...new Set(success.series.map((s) => s.run))], ['a', 'b']);
});

test('runs with the same oracle ceiling share one reference line, across all their iterations', () => {
  const ceiling = { successRate: 0.9, seeds: 8 }; // run a's
  const other = report('b', [run('b'), ...[1, 2, 3, 4, 5].map((i) => iteration(i, { success_rate: 0.5 }))], ceiling);
  const shared = chart(buildCharts([three, other]), 'success');
  assert.deepEqual(
    shared.series.filter((s) => s.kind === 'reference'),
    [
      {
        run: '',
        label: 'oracle ceiling (8 val seeds)',
        points: [
          [1, 0.9],
          [5, 0.9],
        ],
        kind: 'reference',
      },
    ],
  );
  const lower = report('c', [run('c'), iteration(1, { success_rate: 0.5 })], { successRate: 0.5, seeds: 8 });
  const apart = chart(buildCharts([three, lower]), 'success').series.filter((s) => s.kind === 'reference');
  assert.deepEqual(
    apart.map((s) => [s.run, s.label]),
    [
      ['a', 'a · oracle ceiling (8 val seeds)'],
      ['c', 'c · oracle ceiling (8 val seeds)'],
    ],
  );
});

test("in-group std reads the filter stage's own measures first, else the iteration's", () => {
  const r = report('a', [
    run('a'),
    iteration(1, {
      'filter/in_group_std_all': 0.1,
      'filter/in_group_std_kept': 0.3,
      'in_group_std/all': 0.3,
      'in_group_std/kept': 0.3,
    }),
    iteration(2, { 'in_group_std/all': 0.2, 'in_group_std/kept': 0.4 }),
  ]);
  const std = chart(buildCharts([r]), 'in-group-std');
  assert.deepEqual(
    std.series.map((s) => s.points),
    [
      [
        [1, 0.1],
        [2, 0.2],
      ],
      [
        [1, 0.3],
        [2, 0.4],
      ],
    ],
  );
});

test('a fork marks every chart at the iteration it went back to; the collapse charts read MI and retrieval', () => {
  const forked = {
    ...run('a'),
    lineageId: 'f1-1',
    action: 'FORKED' as const,
    parentLineageId: 'main',
    fromIteration: 1,
    reason: 'collapsed',
    forks: 1,
  };
  const r = report('a', [
    run('a'),
    iteration(1, { 'collapse/mi_estimate': 0.5, 'collapse/retrieval_accuracy': 0.75 }),
    forked,
  ]);
  const charts = buildCharts([r]);
  assert.deepEqual(chart(charts, 'success').markers, [{ run: 'a', iteration: 1, message: 'fork → f1-1: collapsed' }]);
  assert.deepEqual(chart(charts, 'collapse-mi').series[0].points, [[1, 0.5]]);
  assert.deepEqual(chart(charts, 'collapse-retrieval').series[0].points, [[1, 0.75]]);
});
