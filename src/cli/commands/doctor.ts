import type { Command } from 'commander';

export function registerDoctor(program: Command): void {
  program
    .command('doctor')
    .description(
      'Check Node, onnxruntime, each execution provider (cpu, cuda, webgpu) and each local service, ' +
        'and print what is working',
    )
    .option('--json', 'one JSON line per check')
    .action(async (opts: { json?: boolean }) => (await import('../doctor-checks.ts')).doctor(opts));
}
