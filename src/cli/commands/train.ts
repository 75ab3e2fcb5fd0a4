import type { Command } from 'commander';
import { readFile } from 'node:fs/promises';
import { join, resolve as resolvePath } from 'node:path';
import { SingleBar, Presets } from 'cli-progress';
import { canonicalConfigJSON, resolveConfig } from '../../rl/config.ts';
import { PRESET_NAMES, type PresetName } from '../../rl/presets.ts';
import { trainEmbedded, type IterationReport } from '../../rl/embedded.ts';
import { prepareRun } from '../../rl/run-setup.ts';
import { checkRunId, runLocation, type RunLocation } from '../../replay/location.ts';
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
  restart?: boolean;
  dryRun?: boolean;
  durable?: boolean;
  model?: string;
  agent?: string;
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
    throw new ConfigError('--restart', 'starts a new embedded run over; it cannot be combined with --resume or --durable');
  }
  if (flags.dryRun && flags.durable) throw new ConfigError('--dry-run', 'checks embedded runs; drop --durable');
  if (flags.durable && resume) {
    throw new ConfigError('--resume', 'a durable run resumes with `starpo resume <run> --from-iteration k --durable`');
  }
}

async function train(flags: TrainFlags): Promise<void> {
  checkCombinations(flags);
  const overrides = [
    ...modelOverride(flags.model), ...(flags.agent === undefined ? [] : [`agent=${flags.agent}`]), ...flags.set,
    ...(flags.env ? [`env=${flags.env}`] : []),
    ...(flags.iterations ? [`iterations=${flags.iterations}`] : []),
  ];
  const resume = flags.resume !== undefined;
  const { root, runId } = runOf(flags);
  const config = resume ? undefined : resolveConfig({ preset: flags.preset as PresetName, file: await readConfigFile(flags.config), overrides });
  if (flags.durable) {
    await (await import('../../durable/train.ts')).trainDurable(config!, { runId });
    return;
  }
  const start = { root, runId, config, resume, initFrom: flags.initFrom, restart: flags.restart };
  const prepared = await prepareRun(start);
  const dir = join(root, runId);
  if (flags.dryRun) {
    console.log(`resolved config:\n${canonicalConfigJSON(prepared.c)}`);
    console.log(`dry run: run ${runId} in ${dir} would ${resume ? 'resume' : 'start'}; every check passed, nothing was written`);
    return;
  }
  if (config) console.log(`resolved config (saved as ${join(dir, 'config.json')}):\n${canonicalConfigJSON(config)}`);
  const spec = envSpecId(runEnvConfig(prepared.c));
  console.log(`environment ${prepared.c.env}: spec id ${spec} (success figures compare only under equal ids)`);
  const bar = progressBar();
  const controller = new AbortController();
  // Ctrl-C finishes the current iteration and its checkpoint, then stops; a second Ctrl-C exits at once.
  process.once('SIGINT', () => { controller.abort(); process.once('SIGINT', () => process.exit(130)); });
  const out = await trainEmbedded({ ...start, onIteration: bar.update, signal: controller.signal }, prepared).finally(bar.stop);
  const { iterations } = out.config;
  const where = `lineage ${out.lineageId}, environment spec ${envSpecId(runEnvConfig(out.config))}`;
  if (out.lastIteration < iterations) {
    console.log(`run ${runId}: stopped after iteration ${out.lastIteration} of ${iterations} (${where}; checkpointed); ` +
      `continue with: starpo train --resume ${dir}`);
  } else console.log(`run ${runId}: finished iteration ${out.lastIteration} (${where}); events and checkpoints in ${dir}/`);
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
    .option('--restart', 'start a new run under --run-id over one that stopped before its first checkpoint (its warm-start)')
    .option('--dry-run', 'resolve and validate everything (config, run id, model, memory), print the config, write nothing')
    .option('--durable', 'run on Temporal workers (`starpo worker`), events on Kafka, checkpoints in S3')
    .option('--model <dir>', 'Hugging Face model directory to train (its tokenizer, chat template and weights); default: a tiny model from scratch')
    .option('--agent <command>', 'train an external agent program: run once per episode against an OpenAI-compatible gateway (README "Train an existing agent")')
    .action(train);
}
