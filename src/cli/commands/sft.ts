import type { Command } from 'commander';
import { resolveConfig } from '../../rl/config.ts';
import { trainEmbedded } from '../../rl/embedded.ts';
import { validationSeeds } from '../../rl/iteration.ts';
import { DEMO_SEED_BASE } from '../../rl/sft.ts';
import { writeExpertDataset, type TemplateName } from '../../agent/index.ts';
import { resolveEnvConfig } from '../../envs/index.ts';

interface SftFlags {
  env: string;
  steps: string;
  episodes: string;
  policy: string;
  set: string[];
  runId?: string;
  runsDir: string;
  dataset?: string;
}

/**
 * Supervised fine-tuning on solver demonstrations, as a run of its own: the warm-started policy is the
 * run's checkpoint 0, so `starpo eval` measures it and `starpo train --resume` continues it with RL.
 */
async function sft(flags: SftFlags): Promise<void> {
  const config = resolveConfig({ overrides: [
    `env=${flags.env}`, `sftSteps=${flags.steps}`, `sftEpisodes=${flags.episodes}`, `sftPolicy=${flags.policy}`, ...flags.set,
  ] });
  if (flags.dataset) {
    const seeds = Array.from({ length: config.sftEpisodes }, (_, i) => DEMO_SEED_BASE + i);
    const out = await writeExpertDataset(flags.dataset, { env: resolveEnvConfig(config.env), seeds, template: config.template as TemplateName });
    console.log(`wrote ${out.written} demonstrations to ${flags.dataset} (${out.skipped} unsolved seeds skipped)`);
  }
  const runId = flags.runId ?? `sft-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  await trainEmbedded({ root: flags.runsDir, runId, config, stopAfter: 0 });
  console.log(`run ${runId}: warm-started policy saved as checkpoint 0 in ${flags.runsDir}/${runId}/ ` +
    `(validation seeds: ${validationSeeds(config).length}); continue with RL: starpo train --resume ${flags.runsDir}/${runId}`);
}

export function registerSft(program: Command): void {
  program.command('sft')
    .description('Supervised warm-start on solver demonstrations (saved as checkpoint 0 of a run)')
    .option('--env <name>', 'environment preset', 'sokoban')
    .option('--steps <n>', 'optimiser steps', '400')
    .option('--episodes <n>', 'demonstration episodes', '1000')
    .option('--policy <expert|random>', 'solver-optimal or random legal demonstrations', 'expert')
    .option('--set <key=value>', 'override any config field (repeatable)', (v: string, acc: string[]) => [...acc, v], [])
    .option('--run-id <id>', 'run id (default: a timestamp)')
    .option('--runs-dir <dir>', 'where runs live', 'runs')
    .option('--dataset <file.jsonl>', 'also write the demonstrations as a JSONL dataset')
    .action(sft);
}
