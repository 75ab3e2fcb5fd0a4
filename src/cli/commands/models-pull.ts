/**
 * `starpo models pull org/name[@revision]`: fetch a hub model into the Hugging Face cache ahead of a run (a
 * run would pull it too, but a multi-gigabyte download is better watched on its own), and print the snapshot
 * directory, which `--model` also accepts. On a terminal a bar shows the bytes, as train's bar does (progress.ts
 * draws iteration reports only, so this one is cli-progress set up the same way); elsewhere one log line per file.
 */
import type { Command } from 'commander';
import { Presets, SingleBar } from 'cli-progress';
import { ConfigError } from '../../errors.ts';
import { log } from '../../log.ts';
import { parseHubId } from '../../models/hub/cache.ts';
import type { PullProgress } from '../../models/hub/pull.ts';

const MB = (bytes: number): string => (bytes / 1e6).toFixed(1);

interface Progress {
  readonly onProgress: PullProgress;
  stop(): void;
}

function progressFor(stream: NodeJS.WriteStream): Progress {
  let lastFile = '';
  if (!stream.isTTY)
    return {
      onProgress: (done, total, file) => {
        if (file === lastFile) return;
        lastFile = file;
        log.info(`models pull: ${file} (${MB(done)} of ${MB(total)} MB done)`);
      },
      stop: () => undefined,
    };
  const bar = new SingleBar(
    { format: '{file} [{bar}] {mb}/{totalMb} MB | ETA {eta_formatted}', etaBuffer: 50, hideCursor: true, stream },
    Presets.shades_classic,
  );
  let started = false;
  return {
    onProgress: (done, total, file) => {
      const payload = { file: file.padEnd(32), mb: MB(done), totalMb: MB(total) };
      if (!started) bar.start(total, done, payload);
      started = true;
      bar.setTotal(total);
      bar.update(done, payload);
    },
    stop: () => {
      if (started) bar.stop();
    },
  };
}

export function registerModelsPull(models: Command): void {
  models
    .command('pull')
    .description(
      'Download a model from the Hugging Face hub (its config, tokenizer and safetensors weights) into the ' +
        'Hugging Face cache, which Python tools share; HF_TOKEN for gated models, HF_ENDPOINT for another hub',
    )
    .argument('<org/name[@revision]>')
    .action(async (spec: string) => {
      const id = parseHubId(spec);
      if (id === null) throw new ConfigError('model', `${spec} is not a hub id org/name[@revision]`);
      const progress = progressFor(process.stderr);
      let dir: string;
      try {
        const { pullHubModel } = await import('../../models/hub/pull.ts');
        dir = await pullHubModel({ ...id, onProgress: progress.onProgress });
      } finally {
        progress.stop();
      }
      console.log(dir);
    });
}
