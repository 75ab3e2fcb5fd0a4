import type { Command } from 'commander';
import { resolveConfig } from '../../rl/config.ts';
import { validationSeeds } from '../../rl/seeds.ts';
import { checkRunId } from '../../run/location.ts';
import { MODEL_HELP, modelOverride } from './train.ts';

interface SftFlags {
  env: string;
  steps: string;
  episodes: string;
  policy: string;
  set: string[];
  runId?: string;
  runsDir: string;
  dataset?: string;
  model?: string;
}

/**
 * Supervised fine-tuning on solver demonstrations, as a run of its own: the warm-started policy is the
 * run's checkpoint 0, so `starpo eval` measures it and `starpo train --resume` continues it with RL.
 */
async function sft(flags: SftFlags): Promise<void> {
  const config = resolveConfig({
    overrides: [
      ...modelOverride(flags.model),
      `env=${flags.env}`,
      `sftSteps=${flags.steps}`,
      `sftEpisodes=${flags.episodes}`,
      `sftPolicy=${flags.policy}`,
      ...flags.set,
    ],
  });
  const runId = checkRunId(flags.runId ?? `sft-${new Date().toISOString().replace(/[:.]/g, '-')}`, '--run-id');
  const start = { root: flags.runsDir, runId, config, stopAfter: 0, command: 'starpo sft' };
  const { prepareRun } = await import('../../embedded/run-setup.ts');
  const prepared = await prepareRun(start); // everything is checked before the dataset or the run is written
  if (flags.dataset) {
    const { openSandbox } = await import('../../rl/tool-use.ts');
    const { demonstrations } = await import('../../rl/sft.ts');
    const { writeRecords } = await import('../../agent/index.ts');
    const sandbox = openSandbox(config);
    const demos = await demonstrations(config, prepared.run, sandbox).finally(() => sandbox?.close());
    await writeRecords(
      flags.dataset,
      demos.map((d) => d.record),
    );
    console.log(
      `wrote ${demos.length} demonstrations to ${flags.dataset} (${config.sftEpisodes - demos.length} seeds ` +
        'without one skipped)',
    );
  }
  const { trainEmbedded } = await import('../../embedded/driver.ts');
  await trainEmbedded(start, prepared);
  console.log(
    `run ${runId}: warm-started policy saved as checkpoint 0 in ${flags.runsDir}/${runId}/ (validation seeds: ` +
      `${validationSeeds(config).length}); continue with RL: starpo train --resume ${flags.runsDir}/${runId}`,
  );
}

export function registerSft(program: Command): void {
  program
    .command('sft')
    .description('Supervised warm-start on solver demonstrations (saved as checkpoint 0 of a run)')
    .option('--env <name>', 'environment preset', 'sokoban')
    .option('--steps <n>', 'optimiser steps', '400')
    .option('--episodes <n>', 'demonstration episodes', '1000')
    .option('--policy <expert|random>', 'solver-optimal or random legal demonstrations', 'expert')
    .option(
      '--set <key=value>',
      'override any config field (repeatable)',
      (v: string, acc: string[]) => [...acc, v],
      [],
    )
    .option('--run-id <id>', 'run id (default: a timestamp)')
    .option('--runs-dir <dir>', 'where runs live', 'runs')
    .option('--dataset <file.jsonl>', 'also write the demonstrations as a JSONL dataset')
    .option('--model <model>', `the pretrained model to fine-tune: ${MODEL_HELP} (default: a tiny model from scratch)`)
    .action(sft);
}
