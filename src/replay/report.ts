/**
 * How `starpo replay` shows its result: a table plus notes for people, or JSON lines for tools
 * (one `iteration` line per checked iteration, `problem` lines for what the log reader noted, one `summary` line).
 */
import { describeDamage, describeProblem, isDamage, severityOf } from '../events/problems.ts';
import { whyNot } from './compare.ts';
import type { IterationCheck, ReplayOutcome } from './run.ts';
import { newTable } from '../terminal.ts';

const num = (x: number): string => (Number.isInteger(x) ? String(x) : x.toPrecision(6));

function verdict(c: IterationCheck): string {
  const m = c.mismatches[0];
  if (m) return `MISMATCH ${m.metric}: recorded ${num(m.recorded)}, events give ${num(m.recomputed)}`;
  if (c.divergences.length > 0) return `DIVERGED ${c.divergences[0]}`;
  return 'ok';
}

/** Every recorded metric replay could not recompute, grouped by the reason. */
export function notRecomputableByReason(outcome: ReplayOutcome): Record<string, string[]> {
  const names = [...new Set(outcome.iterations.flatMap((c) => c.notRecomputable))].sort();
  const out: Record<string, string[]> = {};
  for (const name of names) (out[whyNot(name)] ??= []).push(name);
  return out;
}

export function failedIterations(outcome: ReplayOutcome): number[] {
  return outcome.iterations.filter((c) => !c.ok).map((c) => c.iteration);
}

export function renderTable(outcome: ReplayOutcome): string {
  const table = newTable(['iteration', 'lineage', 'train', 'val', 'checked', 'mismatched', 'result']);
  for (const c of outcome.iterations) {
    const { iteration, lineageId, trainTrajectories, valTrajectories, checked, mismatches } = c;
    table.push([iteration, lineageId, trainTrajectories, valTrajectories, checked, mismatches.length, verdict(c)]);
  }
  return table.toString();
}

export function renderNotes(outcome: ReplayOutcome): string[] {
  const failed = failedIterations(outcome);
  const { dropped, unfinished } = outcome;
  const agreement =
    failed.length === 0
      ? 'every recomputed metric equals the recorded one'
      : `${failed.length} iterations disagree: ${failed.join(', ')}`;
  const specs = [...new Set(outcome.iterations.map((c) => c.envSpecId).filter((id) => id !== ''))];
  const lines = [
    `${outcome.iterations.length} iterations, ${outcome.trajectories} trajectories replayed; ${agreement}`,
    ...(specs.length > 0 ? [`environment spec: ${specs.join(', ')}`] : []),
    `events left out by replay: ${dropped.duplicate} duplicates, ${dropped.superseded} of superseded lineages`,
  ];
  for (const [reason, names] of Object.entries(notRecomputableByReason(outcome))) {
    lines.push(`not recomputable from events (${reason}): ${names.join(', ')}`);
  }
  for (const f of outcome.forks) {
    const from = `${f.parentLineageId ?? '?'}@${f.fromIteration}`;
    lines.push(`forked (onCollapse=fork) from ${from} as lineage ${f.lineageId}: ${f.reason}`);
  }
  for (const p of outcome.problems) {
    lines.push(isDamage(p) ? `WARNING: partial replay, the log ends early: ${describeDamage(p)}` : describeProblem(p));
  }
  if (unfinished.length > 0) lines.push(`iterations without an IterationEvent (unfinished): ${unfinished.join(', ')}`);
  return lines;
}

export function jsonLines(outcome: ReplayOutcome, extra: Record<string, unknown> = {}): string[] {
  const lines = outcome.iterations.map((c) => JSON.stringify({ type: 'iteration', ...c }));
  for (const p of outcome.problems) lines.push(JSON.stringify({ type: 'problem', severity: severityOf(p), ...p }));
  lines.push(
    JSON.stringify({
      type: 'summary',
      runId: outcome.runId,
      iterations: outcome.iterations.length,
      trajectories: outcome.trajectories,
      failed: failedIterations(outcome),
      dropped: outcome.dropped,
      unfinished: outcome.unfinished,
      forks: outcome.forks,
      problems: outcome.problems.length,
      notRecomputable: notRecomputableByReason(outcome),
      ...extra,
    }),
  );
  return lines;
}
