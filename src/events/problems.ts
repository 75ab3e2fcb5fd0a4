import { log } from '../log.ts';
import type { ReadOptions, ReadProblem } from './types.ts';

/** Readers skip what they cannot decode and say so; by default that is a warning in the log. */
export function problemHandler(options: ReadOptions | undefined): (problem: ReadProblem) => void {
  return options?.onProblem ??
    ((problem) => log.warn({ problem }, `event log: skipped ${problem.kind} at ${problem.where}`));
}
