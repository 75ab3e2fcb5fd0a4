/**
 * A durable run's progress as terminal lines, one per completed iteration (`train --durable`, `starpo status`).
 * Apart from the client so that `starpo status` loads Temporal's client only when it runs.
 */
import type { IterationSummary, Progress } from './protocol.ts';

const fmt = (x: number | null, digits = 3): string => (x === null || Number.isNaN(x) ? '-' : x.toFixed(digits));

export function summaryLine(s: IterationSummary, iterations: number): string {
  return (
    `iteration ${s.iteration}/${iterations}: success ${fmt(s.success, 2)} val ${fmt(s.valSuccess, 2)} in-group ` +
    `std ${fmt(s.inGroupStd)} entropy ${fmt(s.entropy)} grad ${fmt(s.gradNorm)} (${(s.ms / 1000).toFixed(1)} s)` +
    `${s.warning ? ` | echo trap: ${s.warning}` : ''}`
  );
}

/** Prints each iteration summary once, as progress polls reveal them. */
export function progressPrinter(say: (line: string) => void): (p: Progress) => void {
  let shown = 0;
  return (p) => {
    for (const s of p.recent) {
      if (s.iteration <= shown) continue;
      say(summaryLine(s, p.iterations));
      shown = s.iteration;
    }
  };
}
