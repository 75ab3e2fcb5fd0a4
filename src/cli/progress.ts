/**
 * train's progress bar on a terminal. The bar owns the bottom line; anything else shown while it runs (an
 * Echo-Trap warning, the logs with --verbose) goes through `note`, which cli-progress prints above the bar
 * at its next redraw, so lines and bar never share a line.
 */
import { MultiBar, Presets, type SingleBar } from 'cli-progress';
import type { IterationReport } from '../embedded/driver.ts';
import { headlineMetrics } from '../rl/metric-names.ts';

export interface ProgressBar {
  update(report: IterationReport): void;
  /** One line (no newline) above the bar, or straight to the stream before the bar has started. */
  note(line: string): void;
  stop(): void;
}

const fmt = (x: number | undefined, digits = 3): string => (x === undefined ? '-' : x.toFixed(digits));

const FORMAT =
  'iter {value}/{total} [{bar}] ETA {eta_formatted} | success {success} | val {val} | std {std} | ' +
  'entropy {entropy}';

/** `warnings`: show each Echo-Trap warning as a note (off when the logs, which carry it, are shown). */
export function progressBar(stream: NodeJS.WriteStream, warnings: boolean): ProgressBar {
  const bars = new MultiBar({ format: FORMAT, etaBuffer: 5, hideCursor: true, stream }, Presets.shades_classic);
  let bar: SingleBar | null = null;
  const note = (line: string): void => {
    if (bar) bars.log(`${line}\n`);
    else stream.write(`${line}\n`);
  };
  return {
    note,
    update(r) {
      bar ??= bars.create(r.iterations, r.iteration - 1, {});
      const h = headlineMetrics(r.metrics);
      bar.update(r.iteration, {
        success: fmt(h.success, 2),
        val: fmt(h.valSuccess, 2),
        std: fmt(h.inGroupStd),
        entropy: fmt(h.entropy),
      });
      if (warnings && r.warning) note(`iteration ${r.iteration}: echo trap: ${r.warning}`);
    },
    stop() {
      if (!bar) return;
      bars.update(); // prints the notes still waiting for a redraw
      bars.stop();
    },
  };
}
