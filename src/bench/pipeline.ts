/**
 * `starpo bench pipeline`: per-iteration time and trajectories/s of the embedded and the durable driver
 * (Temporal + Kafka + S3; the update worker in this process, rollout workers as child processes), on-policy
 * vs asynchronous (asyncStaleness 1), 1 vs 2 rollout worker processes; the share of time the update worker
 * idles; the durable driver's overhead over the embedded one, stage by stage; then trajectory events/s to
 * Kafka. JSON lines. Targets: async ≥ 1.5× on-policy, durable overhead < 5%, ≥ 5,000 events/s.
 * The services must be running (`starpo services start`).
 * Every engine runs one onnxruntime thread (threads=1), so one rollout worker is one core's worth of rollout
 * and two are two, whatever else runs. The sides run one after another in rounds, embedded and durable
 * alternating, because this machine is shared and noisy; each side's first iteration (compilation, engine
 * start) is left out and medians are taken over the rest. STARPO_BENCH_SET="envGroups=4,groupSize=8"
 * overrides the config; STARPO_BENCH_ITERATIONS (default 4), STARPO_BENCH_REPEATS (rounds, default 1),
 * STARPO_BENCH_SIDES (comma-separated side names, default all), STARPO_BENCH_KAFKA=0 skips the Kafka part.
 */
import { mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { resolveConfig, type RlConfig } from '../rl/config.ts';
import { trainEmbedded } from '../embedded/driver.ts';
import { createEventLog, createEventReader, createLocalEventReader, type TrajectoryEvent } from '../events/index.ts';
import { followRun, submitRun } from '../durable/client.ts';
import { spawnWorker, startLocalStack, uniqueId } from '../durable/harness.ts';
import type { EventsTarget } from '../durable/protocol.ts';
import { activityMedians, activitySpans, busyMs, dispatchMedians, iterationEnds, median } from './pipeline-timeline.ts';

type Write = (record: Record<string, unknown>) => void;

interface Side {
  name: string;
  driver: 'embedded' | 'durable';
  staleness: number;
  rolloutWorkers: number;
}

const SIDES: Side[] = [
  { name: 'embedded-sync', driver: 'embedded', staleness: 0, rolloutWorkers: 0 },
  { name: 'durable-sync-1w', driver: 'durable', staleness: 0, rolloutWorkers: 1 },
  { name: 'embedded-async', driver: 'embedded', staleness: 1, rolloutWorkers: 0 },
  { name: 'durable-async-1w', driver: 'durable', staleness: 1, rolloutWorkers: 1 },
  { name: 'durable-sync-2w', driver: 'durable', staleness: 0, rolloutWorkers: 2 },
  { name: 'durable-async-2w', driver: 'durable', staleness: 1, rolloutWorkers: 2 },
];

/** What one side measured: per-iteration periods (iteration end to iteration end) and stage times, warm-up left out. */
interface Measured {
  periodsMs: number[];
  stagesMs: Record<string, number>[];
  extra: Record<string, unknown>;
}

/**
 * Published StarPO-S on Sokoban (8 groups × 16, the small model from scratch), one thread per
 * engine, validation at the end.
 */
function benchConfig(staleness: number): RlConfig {
  const iterations = Number(process.env.STARPO_BENCH_ITERATIONS ?? 4);
  const extra = (process.env.STARPO_BENCH_SET ?? '').split(',').filter((s) => s.trim() !== '');
  return resolveConfig({
    overrides: [
      `iterations=${iterations}`,
      'valEvery=0',
      'valSeeds=32',
      'threads=1',
      ...extra,
      `asyncStaleness=${staleness}`,
    ],
  });
}

const rounded = (m: Record<string, number>) =>
  Object.fromEntries(Object.entries(m).map(([k, v]) => [k, Math.round(v)]));
/** Stage name → median over the iterations (a stage an iteration lacks counts as 0 there). */
function stageMedians(rows: readonly Record<string, number>[]): Record<string, number> {
  const names = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  return Object.fromEntries(names.map((n) => [n, Math.round(median(rows.map((r) => r[n] ?? 0)))]));
}

/** Embedded: the wall time between consecutive iteration reports (each spans an iteration and its checkpoint). */
async function embedded(c: RlConfig, write: Write): Promise<Measured & { root: string }> {
  const root = mkdtempSync(join(tmpdir(), 'starpo-bench-pipeline-'));
  const out: Measured = { periodsMs: [], stagesMs: [], extra: {} };
  let last = performance.now();
  let cpu = process.cpuUsage();
  const cpuMs: number[] = [];
  await trainEmbedded({
    root,
    runId: 'bench',
    config: c,
    onIteration: (r) => {
      const now = performance.now();
      const ms = now - last;
      const used = process.cpuUsage(cpu);
      [last, cpu] = [now, process.cpuUsage()];
      const cpuIterationMs = (used.user + used.system) / 1000; // every thread of this process: trainer, rollout engine
      if (r.iteration > 1) {
        out.periodsMs.push(ms);
        out.stagesMs.push(r.timingsMs);
        cpuMs.push(cpuIterationMs);
      }
      write({
        iteration: r.iteration,
        ms: Math.round(ms),
        cpuMs: Math.round(cpuIterationMs),
        stagesMs: rounded(r.timingsMs),
      });
    },
  });
  out.extra.cpuMs = Math.round(median(cpuMs));
  // The trainer waits for the rollout ('rollout' stage); what it waits beyond that is the update side itself.
  out.extra.trainerWaitPct = pct(median(out.stagesMs.map((s) => s.rollout ?? 0)), median(out.periodsMs));
  return { ...out, root };
}

const pct = (part: number, whole: number) => Number(((100 * part) / whole).toFixed(1));

async function stageTimings(events: EventsTarget, runId: string): Promise<Map<number, Record<string, number>>> {
  const reader = createEventReader({ kind: 'kafka', ...events });
  const out = new Map<number, Record<string, number>>();
  for await (const e of reader.read(runId)) if (e.kind === 'iteration') out.set(e.iteration, e.stageTimingsMs);
  await reader.close();
  return out;
}

/** Durable: iteration ends are the checkpoint activities' completions, from the workflow history. */
async function durable(c: RlConfig, side: Side, write: Write): Promise<Measured> {
  const stack = await startLocalStack({ label: 'bench', role: 'update' });
  const workers = Array.from({ length: side.rolloutWorkers }, () => spawnWorker('rollout', stack.queues));
  try {
    await Promise.all(workers.map((w) => w.ready));
    const shards = side.rolloutWorkers;
    const { handle } = await submitRun(c, {
      client: stack.client,
      runId: uniqueId('bench'),
      storeUri: stack.storeUri,
      events: stack.events,
      options: {
        queues: stack.queues,
        rolloutShards: shards,
        chunkGroups: Math.ceil(c.envGroups / shards),
        continueAsNewEvery: 1000,
      },
    });
    const outcome = await followRun(handle, () => undefined);
    const spans = await activitySpans(handle);
    const ends = iterationEnds(spans);
    const stages = await stageTimings(stack.events, outcome.runId);
    const measured = Array.from({ length: c.iterations - 1 }, (_, k) => k + 2);
    const out: Measured = { periodsMs: [], stagesMs: [], extra: {} };
    for (const i of [1, ...measured]) {
      const ms = ends.get(i)! - (ends.get(i - 1) ?? spans[0].scheduledMs);
      if (i > 1) {
        out.periodsMs.push(ms);
        out.stagesMs.push(stages.get(i) ?? {});
      }
      write({ iteration: i, ms: Math.round(ms), stagesMs: stages.get(i) });
    }
    const [from, to] = [ends.get(1)!, ends.get(c.iterations)!];
    const onQueue = (q: string) => spans.filter((s) => s.queue === q);
    out.extra = {
      updateIdlePct: pct(to - from - busyMs(onQueue(stack.queues.update), from, to), to - from),
      rolloutBusyPct: pct(busyMs(onQueue(stack.queues.rollout), from, to), to - from),
      activityMs: activityMedians(spans, measured),
      dispatchMs: dispatchMedians(spans),
    };
    return out;
  } finally {
    for (const w of workers) w.process.kill('SIGTERM');
    await Promise.all(workers.map((w) => w.exited));
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
        const events = Array.from({ length: batch }, (_, k) => ({
          ...trajectories[(i * batch + k) % trajectories.length],
          group: i,
          rolloutIndex: k,
        }));
        await log.append(events);
        sent += batch;
      }
      const s = (performance.now() - t0) / 1000;
      const bytes = Buffer.byteLength(JSON.stringify(trajectories[0]));
      write({
        metric: 'kafka_trajectory_events_per_s',
        batch,
        events: sent,
        eventsPerS: Math.round(sent / s),
        approxEventJsonBytes: bytes,
        target: 5000,
      });
    }
  } finally {
    await log.close();
  }
}

/** Each side's medians, then the ratios the issue asks for (each a ratio of medians measured in this run). */
function report(results: Map<string, Measured[]>, c: RlConfig, write: Write): void {
  const summary = new Map<string, { ms: number; stages: Record<string, number> }>();
  for (const [name, runs] of results) {
    const periods = runs.flatMap((r) => r.periodsMs);
    const ms = median(periods);
    const stages = stageMedians(runs.flatMap((r) => r.stagesMs));
    summary.set(name, { ms, stages });
    write({
      side: name,
      metric: 'summary',
      iterations: periods.length,
      medianMs: Math.round(ms),
      trajectoriesPerS: Number(((c.envGroups * c.groupSize) / (ms / 1000)).toFixed(2)),
      stagesMs: stages,
      ...runs.at(-1)!.extra,
    });
  }
  const ratio = (a: string, b: string, metric: string, extra: Record<string, unknown> = {}) => {
    const [x, y] = [summary.get(a), summary.get(b)];
    if (x && y)
      write({
        metric,
        slower: a,
        faster: b,
        slowerMs: Math.round(x.ms),
        fasterMs: Math.round(y.ms),
        ratio: Number((x.ms / y.ms).toFixed(3)),
        ...extra,
      });
  };
  ratio('embedded-sync', 'embedded-async', 'async_speedup', { target: '≥ 1.5' });
  ratio('durable-sync-1w', 'durable-async-1w', 'async_speedup', { target: '≥ 1.5' });
  ratio('durable-sync-2w', 'durable-async-2w', 'async_speedup');
  ratio('durable-sync-1w', 'durable-sync-2w', 'rollout_workers_speedup');
  ratio('durable-async-1w', 'durable-async-2w', 'rollout_workers_speedup');
  for (const [e, d] of [
    ['embedded-sync', 'durable-sync-1w'],
    ['embedded-async', 'durable-async-1w'],
  ]) {
    const [x, y] = [summary.get(e), summary.get(d)];
    if (!x || !y) continue;
    const perStage = Object.fromEntries(
      [...new Set([...Object.keys(x.stages), ...Object.keys(y.stages)])].map((s) => [
        s,
        (y.stages[s] ?? 0) - (x.stages[s] ?? 0),
      ]),
    );
    write({
      metric: 'durable_overhead',
      embedded: e,
      durable: d,
      embeddedMs: Math.round(x.ms),
      durableMs: Math.round(y.ms),
      overheadMs: Math.round(y.ms - x.ms),
      overheadPct: pct(y.ms - x.ms, x.ms),
      perStageMs: perStage,
      target: '< 5%',
    });
  }
}

export async function benchPipeline(
  write: Write = (r) => console.log(JSON.stringify({ bench: 'pipeline', ...r })),
): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const picked = (process.env.STARPO_BENCH_SIDES ?? '').split(',').filter((s) => s !== '');
  const sides = SIDES.filter((s) => picked.length === 0 || picked.includes(s.name));
  const c = benchConfig(0);
  write({
    config: {
      env: c.env,
      envGroups: c.envGroups,
      groupSize: c.groupSize,
      iterations: c.iterations,
      threads: c.threads,
    },
    sides: sides.map((s) => s.name),
    loadavg: loadavg(),
  });
  const results = new Map<string, Measured[]>();
  let root = '';
  for (let round = 0; round < Number(process.env.STARPO_BENCH_REPEATS ?? 1); round++) {
    for (const side of sides) {
      const config = benchConfig(side.staleness);
      const tagged: Write = (x) => write({ round, side: side.name, ...x });
      let measured: Measured;
      if (side.driver === 'embedded') {
        const e = await embedded(config, tagged);
        root = e.root;
        measured = e;
      } else {
        measured = await durable(config, side, tagged);
      }
      results.set(side.name, [...(results.get(side.name) ?? []), measured]);
    }
  }
  report(results, c, write);
  write({ metric: 'loadavg_end', loadavg: loadavg() });
  if (root && process.env.STARPO_BENCH_KAFKA !== '0') await kafkaThroughput(root, write);
}
