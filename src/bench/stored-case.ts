/**
 * A learning case's run kept in a runs directory (STARPO_BENCH_RUNS_DIR) instead of a temporary one, so a bench
 * process that stops (a session's end, a crash, Ctrl-C) is continued by the same command: the run resumes from its
 * last checkpoint, bitwise as if it had not stopped (the product's own guarantee), and the case's curve is read
 * back from the run's events, the iterations before the stop included.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { IterationReport } from '../embedded/driver.ts';
import { ConfigError } from '../errors.ts';
import { configDifferences, type RlConfig } from '../rl/config.ts';
import { localRunEvents, readRunConfig } from '../run/location.ts';
import { createLocalCheckpointStore } from '../storage/index.ts';

/** How a case's run starts: new, over a run that stopped before its first checkpoint, or resumed. */
export type CaseStart =
  | { kind: 'fresh' }
  | { kind: 'restart' }
  | {
      kind: 'resume';
      /** The newest checkpoint's iteration: the resumed process trains the iterations after it. */
      fromIteration: number;
    };

/**
 * How the case's run `runId` under `root` starts. A stored run must have been started with the case's config:
 * anything else is refused (its curve would mix two settings) with the fields that differ.
 */
export async function caseStart(root: string, runId: string, config: RlConfig): Promise<CaseStart> {
  if (!existsSync(join(root, runId, 'config.json'))) return { kind: 'fresh' };
  const what = configDifferences(await readRunConfig({ root, runId }), config);
  if (what) {
    throw new ConfigError(
      'STARPO_BENCH_RUNS_DIR',
      `${join(root, runId)} was started with other settings (${what}); move it aside or use another runs directory`,
    );
  }
  const checkpoints = await createLocalCheckpointStore({ root }).list(runId);
  if (checkpoints.length === 0) return { kind: 'restart' };
  return { kind: 'resume', fromIteration: Math.max(...checkpoints.map((c) => c.iteration)) };
}

/** The run's iterations as its events record them, in log order (a fork's lineage after its parent's). */
export interface StoredRun {
  reports: IterationReport[];
  /** Seconds each report's iteration took, from its event's start and end. */
  seconds: number[];
}

/** One read of the run's log: its iterations (a replayed one where it last ran) with Echo-Trap warnings and spans. */
export async function storedRun(root: string, runId: string, iterations: number): Promise<StoredRun> {
  const reader = localRunEvents(root);
  const byKey = new Map<string, { report: IterationReport; seconds: number }>();
  const warnings = new Map<string, string>();
  try {
    for await (const e of reader.read(runId)) {
      if (e.kind === 'echo-trap') warnings.set(`${e.lineageId}@${e.iteration}`, e.message);
      if (e.kind !== 'iteration') continue;
      const key = `${e.lineageId}@${e.iteration}`;
      byKey.delete(key); // a replayed iteration is recorded where it last ran
      const report = {
        iteration: e.iteration,
        iterations,
        metrics: e.metrics,
        timingsMs: e.stageTimingsMs,
        warning: null,
        lineageId: e.lineageId,
      };
      byKey.set(key, { report, seconds: (e.finishedAt.getTime() - e.startedAt.getTime()) / 1000 });
    }
  } finally {
    await reader.close();
  }
  const entries = [...byKey];
  return {
    reports: entries.map(([key, { report }]) => ({ ...report, warning: warnings.get(key) ?? null })),
    seconds: entries.map(([, { seconds }]) => seconds),
  };
}
