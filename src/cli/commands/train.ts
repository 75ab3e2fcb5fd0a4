import type { Command } from 'commander';
import { readFile } from 'node:fs/promises';
import { basename, dirname, resolve as resolvePath } from 'node:path';
import { SingleBar, Presets } from 'cli-progress';
import { canonicalConfigJSON, resolveConfig } from '../../rl/config.ts';
import { PRESET_NAMES, type PresetName } from '../../rl/presets.ts';
import { trainEmbedded, type IterationReport } from '../../rl/embedded.ts';
import { resolveRunModel } from '../../rl/run-model.ts';
import { runEnvConfig } from '../../rl/run-env.ts';
import { envSpecId } from '../../envs/index.ts';
import { ConfigError } from '../../errors.ts';

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
  durable?: boolean;
  model?: string;
}

/** `--model <dir>` as the config override `model=<absolute dir>` (the run may be resumed from elsewhere). */
export function modelOverride(dir: string | undefined): string[] {
  return dir === undefined ? [] : [`model=${resolvePath(dir)}`];
}

const fmt = (x: number | undefined, digits = 3): string => (x === undefined ? '-' : x.toFixed(digits));

async function readConfigFile(path: string | undefined): Promise<unknown> {
  if (!path) return undefined;
  try {
    return JSON.parse(await readFile(path, 'utf8'));
  } catch (cause) {
    throw new ConfigError('--config', `cannot read ${path} as JSON: ${(cause as Error).message}`, { cause });
  }
}

function progressBar(): { update: (r: IterationReport) => void; stop: () => void } {
  const bar = new SingleBar({
    format: 'iter {value}/{total} [{bar}] ETA {eta_formatted} | success {success} | val {val} | std {std} | entropy {entropy}',
    etaBuffer: 5, hideCursor: true,
  }, Presets.shades_classic);
  let started = false;
  return {
    update(r) {
      if (!started) { bar.start(r.iterations, r.iteration - 1, {}); started = true; }
      const m = r.metrics;
      bar.update(r.iteration, {
        success: fmt(m.success_rate, 2), val: fmt(m['val/success_rate'], 2), std: fmt(m['in_group_std/all']), entropy: fmt(m['entropy/mean']),
      });
    },
    stop: () => started && bar.stop(),
  };
}

async function train(flags: TrainFlags): Promise<void> {
  if (flags.preset && !PRESET_NAMES.includes(flags.preset as PresetName)) {
    throw new ConfigError('--preset', `unknown preset "${flags.preset}"; one of ${PRESET_NAMES.join(', ')}`);
  }
  const overrides = [
    ...modelOverride(flags.model), ...flags.set, ...(flags.env ? [`env=${flags.env}`] : []),
    ...(flags.iterations ? [`iterations=${flags.iterations}`] : []),
  ];
  const resume = flags.resume !== undefined;
  const config = resume ? undefined : resolveConfig({ preset: flags.preset as PresetName, file: await readConfigFile(flags.config), overrides });
  const runId = resume ? basename(flags.resume!) : flags.runId ?? `${new Date().toISOString().replace(/[:.]/g, '-')}`;
  const root = resume ? dirname(flags.resume!) : flags.runsDir;
  if (flags.initFrom && (resume || flags.durable)) {
    throw new ConfigError('--init-from', 'starts a new embedded run; it cannot be combined with --resume or --durable');
  }
  if (flags.durable) {
    if (!config) throw new ConfigError('--resume', 'a durable run resumes with `starpo resume <run> --from-iteration k --durable`');
    await (await import('../../durable/train.ts')).trainDurable(config, { runId });
    return;
  }
  if (config) {
    await resolveRunModel(config); // a bad model directory is reported before the config is shown as saved
    console.log(`resolved config (saved as ${root}/${runId}/config.json):\n${canonicalConfigJSON(config)}`);
    const spec = envSpecId(runEnvConfig(config));
    console.log(`environment ${config.env}: spec id ${spec} (success figures compare only under equal ids)`);
  }
  const bar = progressBar();
  const controller = new AbortController();
  // Ctrl-C finishes the current iteration and its checkpoint, then stops; a second Ctrl-C exits at once.
  process.once('SIGINT', () => { controller.abort(); process.once('SIGINT', () => process.exit(130)); });
  const out = await trainEmbedded({ root, runId, config, resume, initFrom: flags.initFrom, onIteration: bar.update, signal: controller.signal })
    .finally(bar.stop);
  console.log(`run ${runId}: finished iteration ${out.lastIteration} (lineage ${out.lineageId}, environment spec ` +
    `${envSpecId(runEnvConfig(out.config))}); events and checkpoints in ${root}/${runId}/`);
}

export function registerTrain(program: Command): void {
  program.command('train')
    .description('Train an agent with the embedded driver (no services): events and checkpoints under runs/<run-id>/')
    .option('--preset <name>', `algorithm preset: ${PRESET_NAMES.join(', ')}`, 'starpo-s')
    .option('--env <name>', 'environment preset (e.g. bandit, sokoban, frozenlake, countdown)')
    .option('--config <file>', 'JSON config file applied over the preset')
    .option('--iterations <n>', 'training iterations')
    .option('--set <key=value>', 'override any config field (repeatable)', (v: string, acc: string[]) => [...acc, v], [])
    .option('--run-id <id>', 'run id (default: a timestamp)')
    .option('--runs-dir <dir>', 'where runs live', 'runs')
    .option('--resume <run-dir>', 'continue runs/<run-id> from its last checkpoint')
    .option('--init-from <run-dir[@iteration]>', "new run whose actor starts from another run's checkpoint (e.g. a starpo sft run) instead of its own warm-start")
    .option('--durable', 'run on Temporal workers (`starpo worker`), events on Kafka, checkpoints in S3')
    .option('--model <dir>', 'Hugging Face model directory to train (its tokenizer, chat template and weights); default: a tiny model from scratch')
    .action(train);
}
