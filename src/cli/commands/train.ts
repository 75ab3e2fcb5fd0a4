import type { Command } from 'commander';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { canonicalConfigJSON, resolveConfig, type RlConfig } from '../../rl/config.ts';
import { PRESET_NAMES, type PresetName } from '../../rl/presets.ts';
import type { PreparedRun } from '../../embedded/run-setup.ts';
import { checkRunId, runLocation, type RunLocation } from '../../run/location.ts';
import { ConfigError } from '../../errors.ts';
import { forTerminal, logToFile } from '../../log.ts';
import { progressBar, type ProgressBar } from '../progress.ts';
import { modelSpec } from '../../models/resolve.ts';

interface TrainFlags {
  preset: string;
  env?: string;
  config?: string;
  iterations?: string;
  set: string[];
  runId?: string;
  runsDir: string;
  resume?: string;
  initFrom?: string;
  restart?: boolean;
  dryRun?: boolean;
  durable?: boolean;
  model?: string;
  agent?: string;
  verbose?: boolean;
  printConfig?: boolean;
}

/** What `--model` takes, for every command's help. */
export const MODEL_HELP =
  'a model directory, .gguf file, packaged name (smollm2-135m-instruct) or hub id org/name[@rev]';

/** `--model` as the config override `model=…`: a path made absolute (the run may be resumed from elsewhere). */
export function modelOverride(spec: string | undefined): string[] {
  return spec === undefined ? [] : [`model=${modelSpec(spec)}`];
}

async function readConfigFile(path: string | undefined): Promise<unknown> {
  if (!path) return undefined;
  try {
    return JSON.parse(await readFile(path, 'utf8'));
  } catch (cause) {
    throw new ConfigError('--config', `cannot read ${path} as JSON: ${(cause as Error).message}`, { cause });
  }
}

/** The run the flags name: `--resume <run-dir>`, or a new run `--run-id` (default: a timestamp) under `--runs-dir`. */
function runOf(flags: TrainFlags): RunLocation {
  if (flags.resume !== undefined) return runLocation(flags.resume, flags.runsDir);
  const runId = flags.runId ?? new Date().toISOString().replace(/[:.]/g, '-');
  return { root: flags.runsDir, runId: checkRunId(runId, '--run-id') };
}

/** Flags that only make sense for a new embedded run. */
function checkCombinations(flags: TrainFlags): void {
  if (flags.preset && !PRESET_NAMES.includes(flags.preset as PresetName)) {
    throw new ConfigError('--preset', `unknown preset "${flags.preset}"; one of ${PRESET_NAMES.join(', ')}`);
  }
  const resume = flags.resume !== undefined;
  if (flags.initFrom && (resume || flags.durable)) {
    throw new ConfigError('--init-from', 'starts a new embedded run; it cannot be combined with --resume or --durable');
  }
  if (flags.restart && (resume || flags.durable)) {
    throw new ConfigError(
      '--restart',
      'starts a new embedded run over; it cannot be combined with --resume or --durable',
    );
  }
  if (flags.dryRun && flags.durable) throw new ConfigError('--dry-run', 'checks embedded runs; drop --durable');
  if (flags.durable && resume) {
    throw new ConfigError('--resume', 'a durable run resumes with `starpo resume <run> --from-iteration k --durable`');
  }
}

/** What trains and on which model, and the whole config with --print-config. */
async function describe(c: RlConfig, prepared: Pick<PreparedRun, 'run'>, flags: TrainFlags, resume: boolean) {
  const { modelLine, trainingLine } = await import('../run-summary.ts');
  console.log(trainingLine(c, resume));
  console.log(modelLine(c, prepared.run));
  if (flags.printConfig) console.log(canonicalConfigJSON(c));
}

interface Screen {
  bar: ProgressBar | null;
  logFile: string | null;
  end: () => void;
}

/**
 * Where the run's logs go while it trains. On a terminal the progress bar owns the screen and the logs go to
 * <run>/train.log (JSON lines), shown above the bar as well with --verbose; elsewhere they stay on stderr as
 * JSON lines, and there is no bar.
 */
function terminalFor(dir: string, verbose: boolean): Screen {
  if (!process.stderr.isTTY) return { bar: null, logFile: null, end: () => undefined };
  const bar = progressBar(process.stderr, !verbose);
  const logFile = join(dir, 'train.log');
  const show = verbose ? (line: string) => bar.note(forTerminal(line).trimEnd()) : undefined;
  const restore = logToFile(logFile, show);
  return {
    bar,
    logFile,
    end: () => {
      bar.stop();
      restore();
    },
  };
}

async function train(flags: TrainFlags): Promise<void> {
  checkCombinations(flags);
  const overrides = [
    ...modelOverride(flags.model),
    ...(flags.agent === undefined ? [] : [`agent=${flags.agent}`]),
    ...flags.set,
    ...(flags.env ? [`env=${flags.env}`] : []),
    ...(flags.iterations ? [`iterations=${flags.iterations}`] : []),
  ];
  const resume = flags.resume !== undefined;
  const { root, runId } = runOf(flags);
  const config = resume
    ? undefined
    : resolveConfig({ preset: flags.preset as PresetName, file: await readConfigFile(flags.config), overrides });
  if (flags.durable) {
    const { resolveRunModel } = await import('../../rl/run-model.ts');
    await describe(config!, { run: await resolveRunModel(config!) }, flags, false);
    if (flags.printConfig) return; // a look at the config must never submit a run
    await (await import('../../durable/train.ts')).trainDurable(config!, { runId });
    return;
  }
  const start = { root, runId, config, resume, initFrom: flags.initFrom, restart: flags.restart };
  const { prepareRun } = await import('../../embedded/run-setup.ts');
  const prepared = await prepareRun(start);
  const dir = join(root, runId);
  await describe(prepared.c, prepared, flags, resume);
  if (flags.printConfig && !flags.dryRun) return; // a user who only wanted to look must not start a run
  if (flags.dryRun) {
    console.log(
      `dry run: run ${runId} in ${dir} would ${resume ? 'resume' : 'start'}; every check passed, nothing was written`,
    );
    return;
  }
  const screen = terminalFor(dir, Boolean(flags.verbose));
  const { whereLine } = await import('../run-summary.ts');
  console.log(whereLine(dir, screen.logFile !== null));
  const warmStart = resume || flags.initFrom ? 0 : prepared.c.sftSteps; // the bar starts after it
  if (warmStart > 0 && !flags.verbose) screen.bar?.note(`supervised warm-start: ${warmStart} steps before iteration 1`);
  const controller = new AbortController();
  // Ctrl-C finishes the current iteration and its checkpoint, then stops; a second Ctrl-C exits at once.
  process.once('SIGINT', () => {
    controller.abort();
    process.once('SIGINT', () => process.exit(130));
  });
  const { trainEmbedded } = await import('../../embedded/driver.ts');
  const out = await trainEmbedded(
    { ...start, onIteration: screen.bar?.update, signal: controller.signal },
    prepared,
  ).finally(screen.end);
  const { iterations } = out.config;
  const { runEnvSpecId } = await import('../../rl/run-env.ts');
  const where = `lineage ${out.lineageId}, environment spec ${runEnvSpecId(out.config)}`;
  if (out.lastIteration < iterations) {
    console.log(
      `run ${runId}: stopped after iteration ${out.lastIteration} of ${iterations} (${where}; checkpointed); ` +
        `continue with: starpo train --resume ${dir}`,
    );
  } else
    console.log(`run ${runId}: finished iteration ${out.lastIteration} (${where}); events and checkpoints in ${dir}/`);
}

export function registerTrain(program: Command): void {
  program
    .command('train')
    .description('Train an agent with the embedded driver (no services): events and checkpoints under runs/<run-id>/')
    .option('--preset <name>', `algorithm preset: ${PRESET_NAMES.join(', ')}`, 'starpo-s')
    .option('--env <name>', 'environment preset (e.g. bandit, sokoban, frozenlake, countdown)')
    .option('--config <file>', 'JSON config file applied over the preset')
    .option('--iterations <n>', 'training iterations')
    .option(
      '--set <key=value>',
      'override any config field (repeatable)',
      (v: string, acc: string[]) => [...acc, v],
      [],
    )
    .option('--run-id <id>', 'run id (default: a timestamp)')
    .option('--runs-dir <dir>', 'where runs live', 'runs')
    .option('--resume <run-dir>', 'continue runs/<run-id> from its last checkpoint')
    .option(
      '--init-from <run-dir[@iteration]>',
      "new run whose actor starts from another run's checkpoint (e.g. a starpo sft run) instead of its own warm-start",
    )
    .option(
      '--restart',
      'start a new run under --run-id over one that stopped before its first checkpoint (its warm-start)',
    )
    .option('--dry-run', 'check everything (config, run id, model, memory) and say what would run; write nothing')
    .option(
      '--print-config',
      'print the whole resolved config as JSON (what <run>/config.json holds) after every check, then exit ' +
        'without training',
    )
    .option('--verbose', 'on a terminal, show the logs above the progress bar too (they go to <run>/train.log)')
    .option('--durable', 'run on Temporal workers (`starpo worker`), events on Kafka, checkpoints in S3')
    .option('--model <model>', `the pretrained model to train: ${MODEL_HELP}; default: a tiny model from scratch`)
    .option(
      '--agent <command>',
      'train an external agent program: run once per episode against an OpenAI-compatible gateway ' +
        '(docs/agents.md)',
    )
    .action(train);
}
