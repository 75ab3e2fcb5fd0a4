import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createLocalEventLog } from '../../../src/events/index.ts';
import { loadReport } from '../../../src/report/load.ts';
import { openSource, resolveRunRef } from '../../../src/report/source.ts';
import { iteration, run, trajectory } from './fixtures.ts';

test('a run is a directory (with a slash or existing) or an id under the runs dir', () => {
  const root = mkdtempSync(join(tmpdir(), 'starpo-report-src-'));
  mkdirSync(join(root, 'abc'));
  assert.deepEqual(resolveRunRef(join(root, 'abc/'), 'local'), { runId: 'abc', root });
  assert.deepEqual(resolveRunRef('runs/new-run', 'local'), { runId: 'new-run', root: resolve('runs') });
  assert.deepEqual(resolveRunRef('xyz', 'local', root), { runId: 'xyz', root });
  assert.deepEqual(resolveRunRef('runs/xyz', 'kafka'), { runId: 'runs/xyz' });
  assert.throws(() => openSource(['a', 'x/a'], { kind: 'local' }), /same run id/);
});

test('a report is loaded from a local event log, duplicates removed by replay', async () => {
  const root = mkdtempSync(join(tmpdir(), 'starpo-report-load-'));
  const log = createLocalEventLog({ root });
  const events = [
    run('r'),
    trajectory(1, 0, 0),
    iteration(1, { success_rate: 0.5 }),
    iteration(2, { success_rate: 1 }),
  ];
  await log.append(events);
  await log.append([iteration(2, { success_rate: 1 })]); // a retried write
  await log.close();
  const source = openSource(['r'], { kind: 'local', runsDir: root });
  const model = await loadReport(source);
  await source.close();
  assert.equal(model.title, 'starpo · r (sokoban)');
  assert.deepEqual(
    model.runs[0].iterations.map((p) => p.iteration),
    [1, 2],
  );
  assert.equal(model.runs[0].trajectories.length, 1);
  assert.equal(model.charts.find((c) => c.id === 'success')!.series[0].points.length, 2);
});
