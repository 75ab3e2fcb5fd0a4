import type { Command } from 'commander';
import { ConfigError } from '../../errors.ts';
import { EXPORT_TYPES, type ExportType } from '../../models/gguf/quantize.ts';

interface ExportFlags {
  out?: string;
  gguf?: string;
  runsDir: string;
  dtype: string;
  peft?: boolean;
}

export function registerExport(program: Command): void {
  program
    .command('export')
    .description(
      "Write a run's actor at a checkpoint as a Hugging Face model directory (LoRA adapters merged into the base), " +
        'or as a GGUF file for llama.cpp',
    )
    .argument('<run-dir[@iteration]>', 'run directory or id, @iteration optional (default: newest)')
    .option('--out <dir>', 'directory to create (must not exist or be empty)')
    .option('--gguf <file>', 'write one GGUF file instead (must not exist)')
    .option('--dtype <type>', 'storage dtype of the weights: f32|bf16 (--out), f32|f16|q8_0 (--gguf)', 'f32')
    .option('--peft', "LoRA runs: also write the adapters in PEFT's format under <out>/adapter/")
    .option('--runs-dir <dir>', 'where runs live, for a bare run id', 'runs')
    .action(async (checkpoint: string, flags: ExportFlags) => {
      if ((flags.out === undefined) === (flags.gguf === undefined))
        throw new ConfigError('--out', 'give exactly one of --out <dir> (Hugging Face directory) or --gguf <file>');
      const dtype = flags.dtype.toUpperCase();
      if (flags.gguf !== undefined) {
        if (flags.peft)
          throw new ConfigError('--peft', 'writes a PEFT adapter directory; use it with --out, not --gguf');
        if (!(EXPORT_TYPES as readonly string[]).includes(dtype))
          throw new ConfigError('--dtype', `must be f32, f16 or q8_0 for --gguf, got "${flags.dtype}"`);
        const { exportGguf } = await import('../../run/export-gguf.ts');
        const r = await exportGguf({ checkpoint, runsDir: flags.runsDir, out: flags.gguf, dtype: dtype as ExportType });
        const { lineageId, iteration } = r.checkpoint;
        const types = Object.entries(r.storedTypes).map(([t, n]) => `${n} ${t}`);
        console.log(
          `exported ${r.checkpoint.runId} ${lineageId}@${iteration}${r.merged ? ' (LoRA merged)' : ''} to ` +
            `${r.out}: ${r.arch} GGUF, ${(r.bytes / 2 ** 20).toFixed(1)} MiB, tensors ${types.join(', ')}`,
        );
        return;
      }
      if (dtype !== 'F32' && dtype !== 'BF16')
        throw new ConfigError('--dtype', `must be f32 or bf16, got "${flags.dtype}"`);
      const { exportCheckpoint } = await import('../../run/export.ts');
      const r = await exportCheckpoint({
        checkpoint,
        runsDir: flags.runsDir,
        out: flags.out!,
        dtype,
        peft: flags.peft,
      });
      const { lineageId, iteration } = r.checkpoint;
      console.log(
        `exported ${r.checkpoint.runId} ${lineageId}@${iteration}${r.merged ? ' (LoRA merged)' : ''} to ` +
          `${r.out}: ${r.files.join(', ')}`,
      );
    });
}
