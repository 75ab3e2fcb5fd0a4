/** Reads runs from a source and builds the whole report model (the only I/O step before rendering). */
import { buildCharts } from './charts.ts';
import { RunCollector, type CollectOptions } from './collect.ts';
import { envInfo } from './env-info.ts';
import type { ReportModel, RunReport } from './model.ts';
import { findRunTokenizer } from './run-tokenizer.ts';
import type { ReportSource, RunRef } from './source.ts';

export interface LoadOptions {
  /** Iterations whose trajectories the report keeps (see collect.ts). */
  trajectoryIterations?: number;
  title?: string;
}

export async function loadRun(source: ReportSource, ref: RunRef, options: LoadOptions = {}): Promise<RunReport> {
  const collectOptions: CollectOptions = { trajectoryIterations: options.trajectoryIterations };
  const fallback = await source.configJson(ref);
  if (fallback !== undefined) collectOptions.fallbackConfigJson = fallback;
  const collector = new RunCollector(ref.runId, collectOptions);
  for await (const event of source.events(ref)) collector.add(event);
  const config = collector.config();
  const tokenizer = collector.needsTokenizer()
    ? await findRunTokenizer(collector.lastCheckpoint(), config)
    : { note: 'no trajectory shown has a token log' };
  return collector.finish(envInfo(config), tokenizer);
}

export function defaultTitle(runs: readonly RunReport[]): string {
  const names = runs.map((r) => (r.env ? `${r.runId} (${r.env})` : r.runId));
  return `starpo · ${names.join(' vs ')}`;
}

export async function loadReport(source: ReportSource, options: LoadOptions = {}): Promise<ReportModel> {
  const runs: RunReport[] = [];
  // One run at a time: each replay reads its log twice, and the machine may be training meanwhile.
  for (const ref of source.refs) runs.push(await loadRun(source, ref, options));
  return {
    title: options.title ?? defaultTitle(runs),
    generatedAt: new Date().toISOString(),
    runs,
    charts: buildCharts(runs),
    live: null,
  };
}
