import type { Command } from 'commander';
import { ConfigError } from '../../errors.ts';
import { exportCheckpoint } from '../../rl/export.ts';

interface ExportFlags {
  out: string;
  runsDir: string;
  dtype: string;
  peft?: boolean;
}

export function registerExport(program: Command): void {
  program
    .command('export')
    .description(
      "Write a run's actor at a checkpoint as a Hugging Face model directory (LoRA adapters merged into the base)",
    )
    .argument('<run-dir[@iteration]>', 'run directory or id, @iteration optional (default: newest)')
    .requiredOption('--out <dir>', 'directory to create (must not exist or be empty)')
    .option('--dtype <f32|bf16>', 'storage dtype of the weights', 'f32')
    .option('--peft', "LoRA runs: also write the adapters in PEFT's format under <out>/adapter/")
    .option('--runs-dir <dir>', 'where runs live, for a bare run id', 'runs')
    .action(async (checkpoint: string, flags: ExportFlags) => {
      const dtype = flags.dtype.toUpperCase();
      if (dtype !== 'F32' && dtype !== 'BF16')
        throw new ConfigError('--dtype', `must be f32 or bf16, got "${flags.dtype}"`);
      const r = await exportCheckpoint({ checkpoint, runsDir: flags.runsDir, out: flags.out, dtype, peft: flags.peft });
      const { lineageId, iteration } = r.checkpoint;
      console.log(
        `exported ${r.checkpoint.runId} ${lineageId}@${iteration}${r.merged ? ' (LoRA merged)' : ''} to ` +
          `${r.out}: ${r.files.join(', ')}`,
      );
    });
}
