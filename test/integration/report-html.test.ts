/**
 * The report in a real browser (Debian's chromium, driven by playwright-core): a tiny Sokoban run is
 * trained here, reported with the CLI (HTML + PNGs), then opened and checked against its own events.
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import {
  createLocalEventLog,
  createLocalEventReader,
  replay,
  type StarpoEvent,
  type TrajectoryEvent,
} from '../../src/events/index.ts';
import { resolveConfig } from '../../src/rl/config.ts';
import { trainEmbedded } from '../../src/embedded/driver.ts';
import { withBrowser } from '../../src/report/browser.ts';
import { CHART_SPECS } from '../../src/report/charts.ts';
import { renderHtml } from '../../src/report/html.ts';
import { loadReport } from '../../src/report/load.ts';
import { pngStats } from '../../src/report/png-stats.ts';
import { openSource } from '../../src/report/source.ts';
import { iteration, run, trajectory } from '../unit/report/fixtures.ts';
import { assertTokenViewMatches, textOf } from '../unit/report/token-view.ts';

const root = mkdtempSync(join(tmpdir(), 'starpo-report-html-'));
const html = join(root, 'out', 'report.html');
const pngDir = join(root, 'out', 'charts');
const events: StarpoEvent[] = [];

const config = resolveConfig({
  preset: 'starpo-s',
  overrides: [
    'env=sokoban',
    'maxTurns=2',
    'envGroups=2',
    'groupSize=3',
    'miniBatchSize=6',
    'iterations=3',
    'threads=1',
    'valSeeds=2',
    'valEvery=2',
    'modelLayers=1',
    'modelHidden=32',
    'modelFfn=64',
    'filter=none',
    'maxResponseTokens=8',
  ],
});

before(
  async () => {
    await trainEmbedded({ root, runId: 'tiny', config });
    // A known Echo-Trap warning (the tiny run is too short to raise one), appended as the trainer would.
    const log = createLocalEventLog({ root });
    await log.append([
      {
        kind: 'echo-trap',
        runId: 'tiny',
        lineageId: 'main',
        iteration: 2,
        evidence: { entropyDrop: 0.5 },
        message: 'test warning',
        detectedAt: new Date(),
      },
    ]);
    await log.close();
    const reader = createLocalEventReader({ root });
    for await (const e of replay(reader, 'tiny')) events.push(e);
    await reader.close();
    const args = ['bin/starpo.js', 'report', join(root, 'tiny'), '--out', html, '--png', pngDir];
    const cli = spawnSync(process.execPath, args, {
      encoding: 'utf8',
      env: { ...process.env, STARPO_LOG_LEVEL: 'warn' },
    });
    assert.equal(cli.status, 0, cli.stderr);
  },
  { timeout: 240_000 },
);

async function openPage<T>(fn: (page: Page, errors: string[]) => Promise<T>): Promise<T> {
  return withBrowser(async (context) => {
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (msg) => {
      if (msg.type() === 'error' || msg.type() === 'warning') errors.push(msg.text());
    });
    page.on('pageerror', (err) => errors.push(err.message));
    page.on('request', (req) => {
      if (!req.url().startsWith('file:')) errors.push(`network request: ${req.url()}`);
    });
    await page.goto(pathToFileURL(html).href);
    await page.waitForSelector('body[data-ready="yes"]', { timeout: 30_000 });
    return fn(page, errors);
  });
}

const iterationsWith = (key: string) =>
  events.filter((e) => e.kind === 'iteration' && e.metrics[key] !== undefined).length;
const T120 = { timeout: 120_000 };

test("the report loads with no console error or network request; each chart has the run's points", T120, async () => {
  await openPage(async (page, errors) => {
    const charts = await page.$$eval('figure.chart', (fs) =>
      fs.map((f) => ({
        id: f.getAttribute('data-chart'),
        points: JSON.parse(f.getAttribute('data-points')!),
        markers: JSON.parse(f.getAttribute('data-markers')!),
      })),
    );
    assert.deepEqual(
      charts.map((c) => c.id),
      CHART_SPECS.map((s) => s.id),
    );
    const success = charts.find((c) => c.id === 'success')!;
    assert.deepEqual(success.points, {
      train: 3,
      validation: iterationsWith('val/success_rate'),
      'oracle ceiling (2 val seeds)': 2,
    });
    assert.equal(iterationsWith('val/success_rate'), 2);
    assert.deepEqual(charts.find((c) => c.id === 'in-group-std')!.points, { 'all groups': 3, 'kept groups': 3 });
    assert.deepEqual(charts.find((c) => c.id === 'value-loss')!.points, { critic: 3 });
    for (const c of charts) assert.deepEqual(c.markers, [2], `${c.id} lacks the echo-trap mark`);
    // The drawn Chart.js objects hold the same data as the DOM says.
    const drawn = await page.evaluate(() => {
      type Drawn = { data: { datasets: { data: unknown[] }[] } };
      const { charts } = (globalThis as unknown as { starpoReport: { charts: Record<string, Drawn> } }).starpoReport;
      return Object.fromEntries(
        Object.entries(charts).map(([id, c]) => [id, c.data.datasets.map((d) => d.data.length)]),
      );
    });
    assert.deepEqual(drawn.success, [3, 2, 2]);
    assert.deepEqual(errors, []);
  });
});

const known = () =>
  events.find(
    (e): e is TrajectoryEvent =>
      e.kind === 'trajectory' && e.iteration === 2 && e.split === 'train' && e.group === 1 && e.rolloutIndex === 2,
  )!;

async function pick(page: Page, e: TrajectoryEvent): Promise<void> {
  await page.selectOption('#pick-iteration', String(e.iteration));
  await page.selectOption('#pick-split', e.split);
  await page.selectOption('#pick-group', String(e.group));
  await page.selectOption('#pick-rollout', String(e.rolloutIndex));
}

test('the trajectory browser shows the grid, response and actions of a chosen trajectory', T120, async () => {
  const chosen = known();
  await openPage(async (page, errors) => {
    await pick(page, chosen);
    const turns = await page.$$eval('.turn[data-turn]', (ts) =>
      ts.map((t) => ({
        grid: [...t.querySelectorAll('.grid-row')].map((r) => r.textContent).join('\n'),
        player: t.querySelector('.cell-player, .cell-player-on-target')?.textContent ?? null,
        response: t.querySelector('pre.response')?.textContent,
      })),
    );
    assert.equal(turns.length, chosen.turns.length);
    assert.deepEqual(
      turns.map((t) => t.grid),
      chosen.turns.map((t) => t.observation),
    );
    assert.deepEqual(
      turns.map((t) => t.response),
      chosen.turns.map((t) => t.response),
    );
    assert.ok(
      turns.every((t) => t.player === 'P' || t.player === 'S'),
      'the player cell is styled as the player',
    );
    assert.equal(await page.getAttribute('.trajectory-summary', 'data-seed'), String(chosen.envSeed));
    assert.equal(await page.locator('.turn.final .grid').count(), 1, 'the re-enacted final state is drawn');
    assert.deepEqual(errors, []);
  });
});

test(
  "a pick made before the token section's toggle event arrives keeps the section as the click left it",
  T120,
  async () => {
    await openPage(async (page, errors) => {
      await pick(page, known());
      await page.click('details.tokens > summary');
      await page.waitForSelector('details.tokens[open] .token-stream');
      // The close and the next pick in one task, before the queued toggle event: the new section must be closed.
      const reopened = await page.evaluate(`(() => {
      document.querySelector('details.tokens > summary').click();
      const rollout = document.querySelector('#pick-rollout');
      rollout.value = [...rollout.options].find((o) => !o.selected).value;
      rollout.dispatchEvent(new Event('change'));
      return document.querySelector('details.tokens').open;
    })()`);
      assert.equal(reopened, false);
      assert.deepEqual(errors, []);
    });
  },
);

test(
  "the token view shows the trajectory's tokens as logged: owners, loss only on the model's, " +
    "the compact '>' as template",
  T120,
  async (t) => {
    // In the compact template a turn whose model wrote the stop ("\n") is followed by the observation at once;
    // otherwise the template appends the stop first. One such trajectory is checked too, when the run has one.
    const stopped = events.find((e): e is TrajectoryEvent => e.kind === 'trajectory' && /43/.test(e.tokenRoles));
    if (!stopped) t.diagnostic('no kept trajectory where the model wrote its stop');
    await openPage(async (page, errors) => {
      for (const e of stopped ? [known(), stopped] : [known()]) {
        await pick(page, e);
        const tokens = await assertTokenViewMatches(page, e);
        // The token before each turn's first model-written one is the assistant header the template wrote.
        const headers = e.turns.map((_, k) => tokens[tokens.findIndex((tok) => tok.turn === k + 1) - 1]);
        assert.deepEqual(
          headers.map((h) => [textOf([h]), h.role, h.loss]),
          headers.map(() => ['>', 'template', 0]),
        );
        const stops = await page.$$eval('.token-turns li', (items) => items.map((i) => i.getAttribute('data-stop')));
        const spans = [...e.tokenRoles.matchAll(/4+(.|$)/g)].map((m) => (m[1] === '3' ? 'yes' : 'no'));
        assert.deepEqual(stops, spans);
        await page.click('details.tokens > summary'); // closed again, so the next pick opens it afresh
      }
      assert.match((await page.textContent('.token-source'))!, /tokenizer of checkpoint main\/00000003/);
      assert.deepEqual(errors, []);
    });
  },
);

test('a screenshot of the page and every exported chart PNG are non-blank', T120, async () => {
  const shot = await openPage((page) => page.screenshot({ fullPage: true }));
  assert.ok(pngStats(shot).variance > 100, 'the page screenshot is blank');
  const files = readdirSync(pngDir).sort();
  assert.deepEqual(files, CHART_SPECS.map((s) => `${s.id}.png`).sort());
  for (const f of files) {
    const stats = pngStats(readFileSync(join(pngDir, f)));
    assert.ok(stats.variance > 100 && stats.width > 400, `${f} looks blank (${JSON.stringify(stats)})`);
  }
});

/** Renders the report of `runIds` kept under `runsDir` and opens it in the browser, ready. */
async function openReportOf(runIds: string[], runsDir: string, fn: (page: Page) => Promise<void>): Promise<void> {
  const source = openSource(runIds, { kind: 'local', runsDir });
  const file = join(runsDir, 'report.html');
  writeFileSync(file, await renderHtml(await loadReport(source)));
  await source.close();
  await withBrowser(async (context) => {
    const page = await context.newPage();
    await page.goto(pathToFileURL(file).href);
    await page.waitForSelector('body[data-ready="yes"]');
    await fn(page);
  });
}

test('FrozenLake cells are styled by their own legend and tool calls show their outputs', T120, async () => {
  const lakeRoot = mkdtempSync(join(tmpdir(), 'starpo-report-lake-'));
  const log = createLocalEventLog({ root: lakeRoot });
  const lake = trajectory(1, 0, 0, 'train', 'lake');
  lake.turns[0].observation = '_O_G\n___X'; // X: the player in a hole (a box in Sokoban)
  await log.append([run('lake', { env: 'frozenlake', iterations: 1, valSeeds: 0 }), lake]);
  await log.close();
  await openReportOf(['lake'], lakeRoot, async (page) => {
    const cells = await page.$$eval('.grid .cell', (cs) => cs.map((c) => c.className.replace('cell cell-', '')));
    assert.deepEqual(cells, [
      'frozen-tile',
      'hole',
      'frozen-tile',
      'goal',
      'frozen-tile',
      'frozen-tile',
      'frozen-tile',
      'player-in-a-hole',
    ]);
    assert.deepEqual(await page.$$eval('.tool-call pre', (ps) => ps.map((p) => p.textContent)), ['print(2)', '2']);
    // An event written before schema v4 has no token log, and the view says so instead of showing nothing.
    assert.match((await page.textContent('details.tokens > summary'))!, /no token log/);
  });
});

test(
  "a seed study's report draws every legend entry: nine runs' train and validation lines and the oracle's",
  T120,
  async () => {
    const studyRoot = mkdtempSync(join(tmpdir(), 'starpo-report-study-'));
    const log = createLocalEventLog({ root: studyRoot });
    const runIds = Array.from({ length: 9 }, (_, k) => `seeds-smollm2-frozenlake-preset-s${k}`);
    for (const id of runIds) {
      const validated = (i: number) => ({
        ...iteration(i, { success_rate: 0.2, 'val/success_rate': 0.25 }, id),
        successRateVal: 0.25,
      });
      await log.append([run(id, { env: 'frozenlake', iterations: 2, valSeeds: 8 }), validated(1), validated(2)]);
    }
    await log.close();
    await openReportOf(runIds, studyRoot, async (page) => {
      const legend = await page.evaluate(() => {
        type Box = { top: number; height: number };
        type Drawn = { height: number; legend: { legendItems: unknown[]; legendHitBoxes: Box[] } };
        const { charts } = (globalThis as unknown as { starpoReport: { charts: Record<string, Drawn> } }).starpoReport;
        const { height, legend: l } = charts.success;
        return {
          items: l.legendItems.length,
          drawn: l.legendHitBoxes.filter((b) => b.top + b.height <= height).length,
        };
      });
      assert.equal(legend.items, 19);
      assert.equal(legend.drawn, legend.items, 'every legend entry is drawn, none cut off below the box');
    });
  },
);
