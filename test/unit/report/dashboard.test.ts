import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalEventLog } from '../../../src/events/index.ts';
import { startDashboard, type ProgressSource } from '../../../src/report/dashboard.ts';
import type { ReportModel } from '../../../src/report/model.ts';
import { openSource } from '../../../src/report/source.ts';
import { iteration, run } from './fixtures.ts';

async function servedModel(progress?: ProgressSource): Promise<{ model: ReportModel; page: string }> {
  const root = mkdtempSync(join(tmpdir(), 'starpo-dashboard-'));
  const log = createLocalEventLog({ root });
  await log.append([run('r'), iteration(1, { success_rate: 0.5 })]);
  await log.close();
  const source = openSource([join(root, 'r')], { kind: 'local' });
  const dashboard = await startDashboard({ source, port: 0, progress });
  try {
    const model = (await (await fetch(`${dashboard.url}api/model`)).json()) as ReportModel;
    return { model, page: await (await fetch(dashboard.url)).text() };
  } finally {
    await dashboard.close();
    await source.close();
  }
}

test('the dashboard serves the page and the model with progress from the event log', async () => {
  const { model, page } = await servedModel();
  assert.deepEqual(
    model.live!.map(({ updatedAt: _, ...l }) => l),
    [{ runId: 'r', iteration: 1, iterations: 4, source: 'events' }],
  );
  assert.equal(model.runs[0].lastIteration, 1);
  assert.match(page, /data-endpoint="api\/model"/);
});

test("a progress source (the durable driver's Temporal query) overrides what the events say", async () => {
  const temporal: ProgressSource = { progress: async () => ({ iteration: 2, stage: 'update' }) };
  const { model } = await servedModel(temporal);
  assert.deepEqual(
    model.live!.map(({ updatedAt: _, ...l }) => l),
    [{ runId: 'r', iteration: 2, iterations: 4, source: 'temporal', stage: 'update' }],
  );
});

test('polls re-read the log only when it changed', async () => {
  const root = mkdtempSync(join(tmpdir(), 'starpo-dashboard-cache-'));
  const log = createLocalEventLog({ root });
  await log.append([run('r'), iteration(1, { success_rate: 0.5 })]);
  const inner = openSource([join(root, 'r')], { kind: 'local' });
  let reads = 0;
  const source = {
    ...inner,
    events: (ref: Parameters<typeof inner.events>[0]) => {
      reads++;
      return inner.events(ref);
    },
  };
  const dashboard = await startDashboard({ source, port: 0, minRebuildMs: 0 });
  const lastIteration = async () =>
    ((await (await fetch(`${dashboard.url}api/model`)).json()) as ReportModel).runs[0].lastIteration;
  try {
    assert.deepEqual([await lastIteration(), await lastIteration(), reads], [1, 1, 1]);
    await log.append([iteration(2, { success_rate: 1 })]);
    assert.deepEqual([await lastIteration(), reads], [2, 2]);
  } finally {
    await log.close();
    await dashboard.close();
    await inner.close();
  }
});
