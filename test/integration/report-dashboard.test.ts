/**
 * The live dashboard against a run training in this process: the page (headless Chromium) is opened
 * before the first iteration and must follow the run to its last one by polling the server.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveConfig } from '../../src/rl/config.ts';
import { trainEmbedded } from '../../src/embedded/driver.ts';
import { withBrowser } from '../../src/report/browser.ts';
import { startDashboard } from '../../src/report/dashboard.ts';
import { openSource } from '../../src/report/source.ts';

const ITERATIONS = 6;
const config = resolveConfig({
  preset: 'starpo-s',
  overrides: [
    'env=sokoban',
    'maxTurns=2',
    'envGroups=2',
    'groupSize=4',
    'miniBatchSize=8',
    `iterations=${ITERATIONS}`,
    'threads=1',
    'valSeeds=2',
    'valEvery=3',
    'modelLayers=1',
    'modelHidden=32',
    'modelFfn=64',
    'filter=none',
    'maxResponseTokens=8',
  ],
});

test("the dashboard page sees a running run's iteration count advance to its end", { timeout: 240_000 }, async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'starpo-dashboard-live-'));
  const source = openSource([join(root, 'live')], { kind: 'local' });
  const dashboard = await startDashboard({ source, port: 0, pollMs: 250, minRebuildMs: 0 });
  try {
    await withBrowser(async (context) => {
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (err) => errors.push(err.message));
      page.on('console', (msg) => {
        if (msg.type() === 'error') errors.push(msg.text());
      });
      await page.goto(dashboard.url);
      await page.waitForSelector('body[data-ready="yes"]');
      const seen = [Number(await page.getAttribute('#status', 'data-iteration'))];
      const training = trainEmbedded({ root, runId: 'live', config });
      // Follow the page until it shows the last iteration, or 30 s after training ended (a loaded machine is slow).
      let doneAt = Infinity;
      const ended = () => {
        doneAt = Date.now();
      };
      training.then(ended, ended);
      while (seen[seen.length - 1] < ITERATIONS && Date.now() < doneAt + 30_000) {
        await new Promise((r) => setTimeout(r, 200));
        const now = Number(await page.getAttribute('#status', 'data-iteration'));
        if (now !== seen[seen.length - 1]) seen.push(now);
      }
      await training;
      t.diagnostic(`iterations seen by the page: ${seen.join(' → ')}`);
      assert.equal(seen[0], 0, 'the page opened before the first iteration');
      assert.equal(seen[seen.length - 1], ITERATIONS, `iterations seen: ${seen.join(' → ')}`);
      assert.deepEqual(
        [...seen].sort((a, b) => a - b),
        seen,
        'the count only moves forward',
      );
      const points = JSON.parse((await page.getAttribute('#chart-success', 'data-points'))!);
      assert.equal(points.train, ITERATIONS);
      assert.deepEqual(errors, []);
    });
  } finally {
    await dashboard.close();
    await source.close();
  }
});
