import type { Command } from 'commander';
import { ConfigError } from '../../errors.ts';
import type { IterationReport } from '../../embedded/driver.ts';
import { iterationFlag, readRunConfig, runLocation } from '../../run/location.ts';
import { headlineMetrics } from '../../rl/metric-names.ts';

export interface ResumeFlags {
  fromIteration?: string;
  runsDir: string;
  durable?: boolean;
  allowPartial?: boolean;
}

/** The durable driver's entry point: starts a new lineage of a Temporal run (src/durable/index.ts). */
export type ResumeDurable = (runId: string, fromIteration: number, opts: { runsDir: string }) => Promise<unknown>;

/** Loaded only for --durable, so an embedded resume does not load the Temporal client. */
const loadResumeDurable = async (): Promise<ResumeDurable> => (await import('../../durable/index.ts')).resumeDurable;

const fmt = (x: number | undefined): string => (x === undefined ? '-' : x.toFixed(3));

function progressLine(r: IterationReport): string {
  const h = headlineMetrics(r.metrics);
  const warning = r.warning ? ` | echo trap: ${r.warning}` : '';
  return (
    `iteration ${r.iteration}/${r.iterations}: success ${fmt(h.success)} val ${fmt(h.valSuccess)} ` +
    `in-group std ${fmt(h.inGroupStd)} entropy ${fmt(h.entropy)}${warning}`
  );
}

export async function resumeCommand(
  run: string,
  flags: ResumeFlags,
  say: (line: string) => void = console.log,
  loadDurable: () => Promise<ResumeDurable> = loadResumeDurable,
): Promise<void> {
  const k = iterationFlag('--from-iteration', flags.fromIteration);
  if (k === undefined) {
    throw new ConfigError('--from-iteration', 'required: the checkpoint iteration the new lineage starts from');
  }
  const loc = runLocation(run, flags.runsDir);
  if (flags.durable) {
    const resumeDurable = await loadDurable();
    say(JSON.stringify(await resumeDurable(loc.runId, k, { runsDir: loc.root })));
    return;
  }
  const { iterations } = await readRunConfig(loc);
  if (k >= iterations) {
    throw new ConfigError('--from-iteration', `${k}: the run ends at iteration ${iterations}, nothing to redo`);
  }
  const controller = new AbortController();
  // Ctrl-C finishes the current iteration and its checkpoint, as in `starpo train`.
  const onSigint = () => controller.abort();
  process.once('SIGINT', onSigint);
  try {
    const { trainEmbedded } = await import('../../embedded/driver.ts');
    const { runEnvSpecId } = await import('../../rl/run-env.ts');
    const out = await trainEmbedded({
      root: loc.root,
      runId: loc.runId,
      fork: { fromIteration: k },
      allowPartial: flags.allowPartial,
      signal: controller.signal,
      onIteration: (r) => say(progressLine(r)),
    });
    say(
      `run ${loc.runId}: lineage ${out.lineageId} continued from iteration ${k} to ${out.lastIteration} ` +
        `(environment spec ${runEnvSpecId(out.config)}); ` +
        `replay now reads iterations ≤ ${k} from the old lineage and later ones from ${out.lineageId}`,
    );
  } finally {
    process.off('SIGINT', onSigint);
  }
}

export function registerResume(program: Command): void {
  program
    .command('resume')
    .argument('<run>', 'run id (under --runs-dir) or path to the run directory')
    .description(
      "Start a new lineage from checkpoint k of the run's surviving history; the old lineage's " +
        'later events stay in the log and replay drops them',
    )
    .option('--from-iteration <k>', 'checkpoint iteration to continue from')
    .option('--runs-dir <dir>', 'where runs live', 'runs')
    .option('--durable', 'resume a durable (Temporal) run instead of an embedded one')
    .option(
      '--allow-partial',
      "the run's log is damaged: start the new lineage from an iteration the log before the damage records " +
        '(a plain resume lists them)',
    )
    .action((run: string, flags: ResumeFlags) => resumeCommand(run, flags));
}
