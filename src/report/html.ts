/**
 * The report page: one self-contained HTML file. Chart.js, the page's scripts and styles and the model
 * itself are inlined, and a Content-Security-Policy forbids every network fetch, so a report opened
 * offline looks exactly like one opened online. The dashboard serves the same page with one addition:
 * the endpoint it polls (and a CSP that allows fetching from its own origin).
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ReportModel } from './model.ts';

export interface LiveOptions {
  /** URL (relative to the page) that returns a fresh ReportModel as JSON. */
  endpoint: string;
  pollMs: number;
}

const CLIENT_DIR = join(dirname(fileURLToPath(import.meta.url)), 'client');
/** Order matters: helpers first, the boot script last. */
const CLIENT_SCRIPTS = ['dom.js', 'charts.js', 'tokens.js', 'trajectories.js', 'app.js'];

interface Assets {
  chartJs: string;
  scripts: string[];
  css: string;
}

let assets: Promise<Assets> | undefined;

/** Chart.js's UMD build, without its source-map comment (a browser would try to fetch the map). */
async function chartJsSource(): Promise<string> {
  const main = createRequire(import.meta.url).resolve('chart.js');
  const text = await readFile(join(dirname(main), 'chart.umd.min.js'), 'utf8');
  return text.replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n');
}

function loadAssets(): Promise<Assets> {
  assets ??= (async () => ({
    chartJs: await chartJsSource(),
    scripts: await Promise.all(CLIENT_SCRIPTS.map((name) => readFile(join(CLIENT_DIR, name), 'utf8'))),
    css: await readFile(join(CLIENT_DIR, 'style.css'), 'utf8'),
  }))();
  return assets;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** JSON safe inside a <script> element: no "</script>", no "<!--", no JS line separators. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** Inline script text cannot contain "</script"; split it (same meaning in JS strings and regexes). */
function inlineScript(source: string): string {
  return `<script>${source.replace(/<\/script/gi, '<\\/script')}</script>`;
}

function csp(live: boolean): string {
  const connect = live ? "'self'" : "'none'";
  return (
    `default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; ` +
    `connect-src ${connect}`
  );
}

export async function renderHtml(model: ReportModel, live?: LiveOptions): Promise<string> {
  const a = await loadAssets();
  const liveAttrs = live ? ` data-endpoint="${escapeHtml(live.endpoint)}" data-poll-ms="${live.pollMs}"` : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${csp(live !== undefined)}">
<meta name="generator" content="starpo report">
<title>${escapeHtml(model.title)}</title>
<style>${a.css}</style>
</head>
<body${liveAttrs}>
<header><h1 id="title">${escapeHtml(model.title)}</h1><p id="status" data-iteration="0"></p></header>
<section id="runs"></section>
<section id="warnings"></section>
<h2>Training curves</h2>
<section id="charts" class="charts"></section>
<h2>Trajectories</h2>
<section id="browser"></section>
<script type="application/json" id="starpo-model">${scriptJson(model)}</script>
${inlineScript(a.chartJs)}
${a.scripts.map(inlineScript).join('\n')}
</body>
</html>
`;
}
