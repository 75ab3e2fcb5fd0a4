/**
 * `starpo bench pipeline`: what the durable driver (Temporal + Kafka + S3, workers in this process) costs
 * per iteration over the embedded driver, on the same config and seeds, in one run; then trajectory
 * events/s appended to Kafka. JSON lines. Targets: overhead < 5% of iteration time, ≥ 5,000 events/s.
 *   node --import tsx scripts/bench-pipeline.ts          (services must be running: starpo services start)
 * STARPO_BENCH_SET="envGroups=4,groupSize=8" overrides the config; STARPO_BENCH_ITERATIONS (default 4);
 * STARPO_BENCH_REPEATS (default 2) alternates embedded and durable runs, because this machine is shared and
 * noisy. The first iteration of each run is warm-up (program compilation, engine start) and is left out;
 * the overhead compares medians of the rest.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import type { WorkflowHandle } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { resolveConfig, type RlConfig } from '../src/rl/config.ts';
import { trainEmbedded } from '../src/rl/embedded.ts';
import { createEventLog, createEventReader, createLocalEventReader, type TrajectoryEvent } from '../src/events/index.ts';
import { followRun, submitRun } from '../src/durable/client.ts';
import { startLocalStack, uniqueId } from '../src/durable/harness.ts';
import type { EventsTarget, IterationSummary } from '../src/durable/protocol.ts';

type Write = (record: Record<string, unknown>) => void;

/**
 * The default config (published StarPO-S on Sokoban, 8 groups × 16, the small model trained from scratch),
 * with fixed threads, validation only at the end and on fewer seeds.
 */
function benchConfig(): RlConfig {
  const iterations = Number(process.env.STARPO_BENCH_ITERATIONS ?? 4);
  const extra = (process.env.STARPO_BENCH_SET ?? '').split(',').filter((s) => s.trim() !== '');
  return resolveConfig({ overrides: [`iterations=${iterations}`, 'valEvery=0', 'valSeeds=32', 'threads=2', ...extra] });
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** Embedded: wall time between consecutive iteration reports (each spans an iteration and a checkpoint). */
async function embedded(c: RlConfig, write: Write): Promise<{ root: string; ms: number[] }> {
  const root = mkdtempSync(join(tmpdir(), 'starpo-bench-pipeline-'));
  const ms: number[] = [];
  let last = performance.now();
  await trainEmbedded({ root, runId: 'bench', config: c, onIteration: (r) => {
    const now = performance.now();
    ms.push(now - last);
    last = now;
    const stagesMs = Object.fromEntries(Object.entries(r.timingsMs).map(([k, v]) => [k, Math.round(v)]));
    write({ driver: 'embedded', iteration: r.iteration, ms: Math.round(ms.at(-1)!), stagesMs });
  } });
  return { root, ms };
}

async function stageTimings(events: EventsTarget, runId: string): Promise<Map<number, Record<string, number>>> {
  const reader = createEventReader({ kind: 'kafka', ...events });
  const out = new Map<number, Record<string, number>>();
  for await (const e of reader.read(runId)) if (e.kind === 'iteration') out.set(e.iteration, e.stageTimingsMs);
  await reader.close();
  return out;
}

type Stamp = { seconds?: unknown; nanos?: number | null } | null | undefined;
const millis = (t: Stamp): number => Number(t?.seconds ?? 0) * 1000 + (t?.nanos ?? 0) / 1e6;

/**
 * Orchestration time: the part of the run (first rollout scheduled → last activity done) in which no
 * activity was executing — Temporal dispatch and workflow tasks. Reads the execution spans from the history.
 */
async function orchestration(handle: WorkflowHandle): Promise<{ spanMs: number; idleMs: number }> {
  const events = (await handle.fetchHistory()).events ?? [];
  const started = new Map<string, number>();
  const spans: [number, number][] = [];
  let first = Infinity;
  for (const e of events) {
    if (e.activityTaskScheduledEventAttributes?.activityType?.name === 'rolloutShard') first = Math.min(first, millis(e.eventTime));
    if (e.activityTaskStartedEventAttributes) started.set(String(e.activityTaskStartedEventAttributes.scheduledEventId), millis(e.eventTime));
    const done = e.activityTaskCompletedEventAttributes;
    if (done) spans.push([started.get(String(done.scheduledEventId))!, millis(e.eventTime)]);
  }
  const run = spans.filter(([a]) => a >= first).sort((x, y) => x[0] - y[0]);
  let busy = 0;
  let reach = first;
  for (const [a, b] of run) {
    busy += Math.max(0, b - Math.max(a, reach));
    reach = Math.max(reach, b);
  }
  return { spanMs: reach - first, idleMs: reach - first - busy };
}

/** Durable: the workflow's own per-iteration time (first activity scheduled to checkpoint published). */
async function durable(c: RlConfig, write: Write): Promise<number[]> {
  const stack = await startLocalStack({ label: 'bench' });
  try {
    const { handle } = await submitRun(c, {
      client: stack.client, runId: uniqueId('bench'), storeUri: stack.storeUri, events: stack.events,
      options: { queues: stack.queues, rolloutShards: 1, chunkGroups: c.envGroups },
    });
    const outcome = await followRun(handle, () => undefined);
    const stages = await stageTimings(stack.events, outcome.runId);
    const recent: IterationSummary[] = outcome.recent;
    for (const s of recent) write({ driver: 'durable', iteration: s.iteration, ms: s.ms, stagesMs: stages.get(s.iteration) });
    const o = await orchestration(handle);
    write({ metric: 'orchestration_idle', spanMs: Math.round(o.spanMs), idleMs: Math.round(o.idleMs),
      idlePct: Number((100 * o.idleMs / o.spanMs).toFixed(2)), perIterationMs: Math.round(o.idleMs / c.iterations) });
    return recent.map((s) => s.ms);
  } finally {
    await stack.close();
  }
}

/** Appends the embedded run's trajectory events to a fresh topic in rollout-chunk-sized batches. */
async function kafkaThroughput(root: string, write: Write, target = 20_000): Promise<void> {
  const reader = createLocalEventReader({ root });
  const trajectories: TrajectoryEvent[] = [];
  for await (const e of reader.read('bench')) if (e.kind === 'trajectory') trajectories.push(e);
  await reader.close();
  const log = createEventLog({ kind: 'kafka', topic: `starpo.${uniqueId('bench')}` });
  try {
    await log.append(trajectories.slice(0, 1)); // connect and create the topic outside the timing
    for (const batch of [32, 512]) {
      let sent = 0;
      const t0 = performance.now();
      for (let i = 0; sent < target; i++) {
        const events = Array.from({ length: batch }, (_, k) => ({ ...trajectories[(i * batch + k) % trajectories.length], group: i, rolloutIndex: k }));
        await log.append(events);
        sent += batch;
      }
      const s = (performance.now() - t0) / 1000;
      const bytes = Buffer.byteLength(JSON.stringify(trajectories[0]));
      write({ metric: 'kafka_trajectory_events_per_s', batch, events: sent, eventsPerS: Math.round(sent / s), approxEventJsonBytes: bytes, target: 5000 });
    }
  } finally {
    await log.close();
  }
}

export async function benchPipeline(write: Write = (r) => console.log(JSON.stringify({ bench: 'pipeline', ...r }))): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const c = benchConfig();
  write({ config: { env: c.env, envGroups: c.envGroups, groupSize: c.groupSize, iterations: c.iterations, threads: c.threads } });
  const [eMs, dMs]: number[][] = [[], []];
  let root = '';
  for (let r = 0; r < Number(process.env.STARPO_BENCH_REPEATS ?? 2); r++) {
    const e = await embedded(c, (x) => write({ repeat: r, ...x }));
    eMs.push(...e.ms.slice(1));
    root = e.root;
    dMs.push(...(await durable(c, (x) => write({ repeat: r, ...x }))).slice(1));
  }
  const [em, dm] = [median(eMs), median(dMs)];
  write({ metric: 'per_iteration_overhead', iterations: eMs.length, embeddedMedianMs: Math.round(em), durableMedianMs: Math.round(dm),
    overheadMs: Math.round(dm - em), overheadPct: Number((100 * (dm - em) / em).toFixed(2)), target: '< 5%' });
  await kafkaThroughput(root, write);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await benchPipeline();
