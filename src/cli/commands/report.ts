import type { Command } from 'commander';
import { join, relative } from 'node:path';
import { ConfigError } from '../../errors.ts';
import type { ReportSource, SourceKind } from '../../report/source.ts';
import { requireRun } from '../../run/location.ts';
import { describeProblem } from '../../events/problems.ts';
import type { ReadProblem } from '../../events/types.ts';

export interface ReportFlags {
  runsDir: string;
  out?: string;
  png?: string | boolean;
  source: string;
  brokers?: string;
  topic?: string;
  store?: string;
  trajectoryIterations: string;
  title?: string;
  allowPartial?: boolean;
}

export function sourceKind(value: string): SourceKind {
  if (value !== 'local' && value !== 'kafka' && value !== 's3') {
    throw new ConfigError('--source', `"${value}" is not local, kafka or s3`);
  }
  return value;
}

type SourceFlags = Pick<ReportFlags, 'source' | 'runsDir' | 'brokers' | 'topic' | 'store' | 'allowPartial'>;

export async function sourceFor(
  runs: readonly string[],
  flags: SourceFlags,
  onProblem?: (problem: ReadProblem) => void,
): Promise<ReportSource> {
  const { openSource } = await import('../../report/source.ts');
  const kafka = {
    ...(flags.brokers && { brokers: flags.brokers.split(',') }),
    ...(flags.topic && { topic: flags.topic }),
  };
  const { runsDir, allowPartial, store: storeUri } = flags;
  return openSource(runs, { kind: sourceKind(flags.source), runsDir, kafka, storeUri, allowPartial, onProblem });
}

export function nonNegativeInt(flag: string, value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new ConfigError(flag, `"${value}" is not a whole number >= 0`);
  return n;
}

/** One local run: its own directory (runs/<id>/report.html); otherwise the current directory. */
function defaultOut(source: ReportSource): string {
  const [only] = source.refs;
  if (source.refs.length === 1 && only.root) return join(only.root, only.runId, 'report.html');
  return `report-${source.refs.map((r) => r.runId).join('-vs-')}.html`;
}

export async function reportCommand(
  runs: string[],
  flags: ReportFlags,
  say: (line: string) => void = console.log,
  warn: (line: string) => void = console.error,
): Promise<void> {
  // Each run's log is read more than once (charts, trajectories): a problem is said once.
  const problems = new Map<string, ReadProblem>();
  const source = await sourceFor(runs, flags, (p) => problems.set(`${p.kind}|${p.where}`, p));
  try {
    const { writeReport } = await import('../../report/index.ts');
    for (const ref of source.refs) if (ref.root) await requireRun({ root: ref.root, runId: ref.runId });
    const out = flags.out ?? defaultOut(source);
    const pngDir = flags.png === true ? out.replace(/\.html?$/i, '') + '-charts' : flags.png || undefined;
    const written = await writeReport({
      source,
      out,
      pngDir,
      trajectoryIterations: nonNegativeInt('--trajectory-iterations', flags.trajectoryIterations),
      ...(flags.title && { title: flags.title }),
    });
    const iterations = written.model.runs.map((r) => `${r.runId}: ${r.lastIteration} iteration(s)`).join(', ');
    say(`wrote ${relative('.', out) || out} (${(written.bytes / 1024).toFixed(0)} KiB; ${iterations})`);
    for (const png of written.pngs) say(`  ${relative('.', png.path)}`);
    for (const p of problems.values()) warn(describeProblem(p));
  } finally {
    await source.close();
  }
}

export function registerReport(program: Command): void {
  program
    .command('report')
    .description(
      'Write one self-contained HTML report (charts, Echo-Trap warnings, trajectories) ' + "from runs' event logs",
    )
    .argument('<runs...>', 'run directories (runs/<id>) or run ids under --runs-dir; several runs share the axes')
    .option('--runs-dir <dir>', 'where run ids are looked up', 'runs')
    .option('--out <file>', 'HTML file (default: runs/<id>/report.html for one run, else ./report-<ids>.html)')
    .option('--png [dir]', 'also write one PNG per chart (default dir: <out>-charts/)')
    .option('--source <kind>', "event log: local (Avro files), kafka, or s3 (a durable run's sealed copy)", 'local')
    .option('--brokers <list>', 'Kafka brokers, comma-separated (default: the local broker)')
    .option('--topic <name>', 'Kafka topic (default: starpo.events)')
    .option('--store <uri>', "the durable runs' store for --source s3 (default: s3://starpo/runs/)")
    .option('--trajectory-iterations <n>', 'iterations whose trajectories the file keeps, evenly spread', '12')
    .option('--title <text>', 'page title')
    .option(
      '--allow-partial',
      'when an event log is damaged, report the events before the damage (with a warning) ' + 'instead of failing',
    )
    .action((runs: string[], flags: ReportFlags) => reportCommand(runs, flags));
}
