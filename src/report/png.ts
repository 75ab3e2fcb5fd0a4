/**
 * `--png`: every chart of a report as its own image, for papers and READMEs. The report file is opened
 * in headless Chromium and each chart's <figure> is screenshotted at 2× so lines stay sharp when
 * scaled; an image without any variation (nothing drawn) is an error, not a silent blank file.
 */
import { mkdir } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import { StarpoError } from '../errors.ts';
import { withBrowser } from './browser.ts';
import { pngStats } from './png-stats.ts';

export interface ExportedChart {
  chart: string;
  path: string;
}

/** Waits for the page's first render; page errors (a broken script) fail the export with their message. */
export async function openReport(page: Page, url: string): Promise<void> {
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(msg.text());
  });
  await page.goto(url);
  // The callback runs in the page; this project's TypeScript lib has no DOM, hence globalThis.
  await page
    .waitForFunction(
      () => (globalThis as { starpoReport?: { ready: boolean } }).starpoReport?.ready === true,
      undefined,
      { timeout: 30_000 },
    )
    .catch((cause: unknown) => {
      const why = errors.join('; ') || (cause as Error).message;
      throw new StarpoError(`the report page did not render: ${why}`, { cause });
    });
  if (errors.length) throw new StarpoError(`the report page logged errors: ${errors.join('; ')}`);
}

async function screenshotCharts(page: Page, outDir: string): Promise<ExportedChart[]> {
  const ids = await page.$$eval('figure.chart', (figures) => figures.map((f) => f.getAttribute('data-chart') ?? ''));
  const out: ExportedChart[] = [];
  for (const id of ids) {
    const path = join(outDir, `${id}.png`);
    await page.locator(`figure.chart[data-chart="${id}"]`).screenshot({ path });
    if (pngStats(readFileSync(path)).variance === 0) throw new StarpoError(`chart ${id} rendered blank (${path})`);
    out.push({ chart: id, path });
  }
  return out;
}

/** Writes `<outDir>/<chart-id>.png` for every chart of the report at `htmlPath`. */
export async function exportChartPngs(htmlPath: string, outDir: string): Promise<ExportedChart[]> {
  await mkdir(outDir, { recursive: true });
  return withBrowser(
    async (context) => {
      const page = await context.newPage();
      await openReport(page, pathToFileURL(resolve(htmlPath)).href);
      return screenshotCharts(page, outDir);
    },
    { scale: 2, viewport: { width: 1000, height: 900 } },
  );
}
