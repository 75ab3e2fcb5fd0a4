/**
 * The live dashboard: the report page served on 127.0.0.1, plus `/api/model`, which the page polls. Each
 * poll re-reads the event log (local files or Kafka), so the page follows a running run as iterations
 * complete; an unchanged log is not read again, so an open tab costs little while a run trains.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { log } from '../log.ts';
import { renderHtml } from './html.ts';
import { loadReport, type LoadOptions } from './load.ts';
import type { LiveStatus, ReportModel, RunReport } from './model.ts';
import type { ReportSource } from './source.ts';

/**
 * Progress of a run beyond what its events say. The event log only knows completed iterations; the
 * durable driver can answer a Temporal query with the iteration and stage in progress. Hook: implement
 * this with a workflow query handle and pass it as `progress` (returning null falls back to events).
 */
export interface ProgressSource {
  progress(runId: string): Promise<Partial<Omit<LiveStatus, 'runId'>> | null>;
}

export interface DashboardOptions extends LoadOptions {
  source: ReportSource;
  /** 0 = any free port. */
  port?: number;
  pollMs?: number;
  minRebuildMs?: number;
  progress?: ProgressSource;
}

export interface Dashboard {
  url: string;
  server: Server;
  close(): Promise<void>;
}

function eventsStatus(run: RunReport, now: string): LiveStatus {
  return {
    runId: run.runId,
    iteration: run.lastIteration,
    iterations: run.plannedIterations,
    source: 'events',
    updatedAt: now,
  };
}

async function liveStatus(runs: readonly RunReport[], progress: ProgressSource | undefined): Promise<LiveStatus[]> {
  const now = new Date().toISOString();
  return Promise.all(
    runs.map(async (run) => {
      const fromEvents = eventsStatus(run, now);
      const extra = await progress?.progress(run.runId).catch(() => null);
      return extra ? { ...fromEvents, ...extra, source: 'temporal' as const, runId: run.runId } : fromEvents;
    }),
  );
}

async function logSignature(source: ReportSource): Promise<string | undefined> {
  const parts = await Promise.all(source.refs.map((ref) => source.signature(ref)));
  return parts.some((p) => p === undefined) ? undefined : parts.join('\n');
}

/**
 * Builds models on demand: concurrent polls share one build, a build younger than `minRebuildMs` is
 * reused, and an unchanged local log is not read again. Live status is fresh on every call.
 */
function modelCache(o: DashboardOptions): () => Promise<ReportModel> {
  let current: { at: number; signature: string | undefined; model: ReportModel } | undefined;
  let pending: Promise<ReportModel> | undefined;
  const rebuild = async (): Promise<ReportModel> => {
    if (current && Date.now() - current.at < (o.minRebuildMs ?? 1000)) return current.model;
    const signature = await logSignature(o.source);
    if (current && signature !== undefined && signature === current.signature) return current.model;
    current = { at: Date.now(), signature, model: await loadReport(o.source, o) };
    return current.model;
  };
  return async () => {
    pending ??= rebuild().finally(() => {
      pending = undefined;
    });
    const model = await pending;
    return { ...model, live: await liveStatus(model.runs, o.progress) };
  };
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  res.end(body);
}

function handler(o: DashboardOptions, model: () => Promise<ReportModel>) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    try {
      if (path === '/api/model') return send(res, 200, 'application/json', JSON.stringify(await model()));
      if (path === '/') {
        const html = await renderHtml(await model(), { endpoint: 'api/model', pollMs: o.pollMs ?? 2000 });
        return send(res, 200, 'text/html; charset=utf-8', html);
      }
      send(res, 404, 'text/plain', 'not found');
    } catch (err) {
      log.error({ err, path }, 'dashboard request failed');
      send(res, 500, 'text/plain', `could not read the run: ${(err as Error).message}`);
    }
  };
}

/** Starts serving; loopback only, since the page shows a run's full trajectories. */
export async function startDashboard(o: DashboardOptions): Promise<Dashboard> {
  const serve = handler(o, modelCache(o));
  const server = createServer((req, res) => void serve(req, res)); // serve() answers its own errors
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
