/**
 * Seeing a run: `writeReport` builds one self-contained HTML file from runs' event logs (and optionally
 * a PNG per chart); `startDashboard` serves the same page live. See README.md in this folder.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { StarpoError } from '../errors.ts';
import { renderHtml } from './html.ts';
import { loadReport, type LoadOptions } from './load.ts';
import type { ReportModel } from './model.ts';
import { exportChartPngs, type ExportedChart } from './png.ts';
import type { ReportSource } from './source.ts';

export interface WriteReportOptions extends LoadOptions {
  source: ReportSource;
  /** The HTML file to write. */
  out: string;
  /** Also write one PNG per chart into this folder. */
  pngDir?: string;
}

export interface WrittenReport {
  model: ReportModel;
  html: string;
  bytes: number;
  pngs: ExportedChart[];
}

/** Writes the report; a run without a single event is an error (a mistyped id, the wrong --runs-dir). */
export async function writeReport(o: WriteReportOptions): Promise<WrittenReport> {
  const model = await loadReport(o.source, o);
  const empty = model.runs.filter((r) => r.iterations.length === 0 && Object.keys(r.config).length === 0);
  if (empty.length) {
    const where = (id: string) => o.source.refs.find((ref) => ref.runId === id)?.root ?? 'the event log';
    throw new StarpoError(`no events for ${empty.map((r) => `run ${r.runId} in ${where(r.runId)}`).join(', ')}`);
  }
  const html = await renderHtml(model);
  await mkdir(dirname(o.out), { recursive: true });
  await writeFile(o.out, html);
  const pngs = o.pngDir ? await exportChartPngs(o.out, o.pngDir) : [];
  return { model, html: o.out, bytes: Buffer.byteLength(html), pngs };
}

export { startDashboard, type Dashboard, type DashboardOptions, type ProgressSource } from './dashboard.ts';
export { openSource, resolveRunRef, type ReportSource, type RunRef, type SourceKind } from './source.ts';
export { loadReport, loadRun, type LoadOptions } from './load.ts';
export { renderHtml } from './html.ts';
export { buildCharts, CHART_SPECS } from './charts.ts';
export { exportChartPngs } from './png.ts';
export type * from './model.ts';
