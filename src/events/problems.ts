import { CorruptDataError } from '../errors.ts';
import { log } from '../log.ts';
import type { ReadOptions, ReadProblem, ReadProblemKind } from './types.ts';

export type Severity = 'note' | 'warning' | 'damage';

const SEVERITY = {
  'torn-tail': 'note',
  unverified: 'note',
  'foreign-bytes': 'warning',
  undecodable: 'damage',
  'unknown-schema': 'damage',
  'corrupt-block': 'damage',
  'checksum-mismatch': 'damage',
  'digest-mismatch': 'damage',
  'missing-segment': 'damage',
  'empty-segment': 'damage',
  'truncated-segment': 'damage',
  'reordered-segment': 'damage',
  'damaged-index': 'damage',
  'missing-index': 'damage',
} as const satisfies Record<ReadProblemKind, Severity>;

export function severityOf(problem: ReadProblem): Severity {
  return SEVERITY[problem.kind];
}

export function isDamage(problem: ReadProblem): boolean {
  return SEVERITY[problem.kind] === 'damage';
}

/** The line a command prints for a problem that did not stop it: a note, or a warning in capitals. */
export function describeProblem(problem: ReadProblem): string {
  if (isDamage(problem)) return `WARNING: partial read, the log ends early: ${describeDamage(problem)}`;
  const line = `${problem.kind} at ${problem.where}: ${problem.message}`;
  return severityOf(problem) === 'warning' ? `WARNING: event log ${line}` : `note: ${line}`;
}

/** One line naming what is damaged, where, and what is lost. */
export function describeDamage(problem: ReadProblem): string {
  const { eventsLost } = problem;
  const lost = eventsLost === undefined ? '' : `; ${eventsLost} acknowledged events from there on are lost`;
  return `event log damaged (${problem.kind}) at ${problem.where}: ${problem.message}${lost}`;
}

/** What a reader does after a problem: read on, or end the read here. */
export type AfterProblem = 'read-on' | 'stop';

/**
 * Notes are reported and reading goes on. Damage throws CorruptDataError, or with `allowPartial` is
 * reported and ends the read: what came before it is the intact prefix. By default reports are warnings in the log.
 */
export function problemHandler(options: ReadOptions | undefined): (problem: ReadProblem) => AfterProblem {
  const report =
    options?.onProblem ??
    ((p: ReadProblem) => log.warn({ problem: p }, `event log: ${p.kind} at ${p.where}: ${p.message}`));
  return (problem) => {
    if (!isDamage(problem)) {
      report(problem);
      return 'read-on';
    }
    if (!options?.allowPartial) {
      const hint = ' (replay and report read the intact prefix with --allow-partial)';
      throw new CorruptDataError(describeDamage(problem) + hint, { details: { ...problem } });
    }
    report(problem);
    return 'stop';
  };
}
