import type { Command } from 'commander';
import { log } from '../../log.ts';

const MB = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;

async function install(flags: { withCudnn?: boolean }): Promise<void> {
  const { gpuPaths } = await import('../../gpu/paths.ts');
  const { installGpu } = await import('../../gpu/install.ts');
  const paths = gpuPaths();
  const r = await installGpu({
    withCudnn: flags.withCudnn,
    paths,
    say: (line) => log.info({ wheels: paths.wheels }, `gpu install: ${line}`),
  });
  const downloaded = r.wheels.filter((w) => w.downloaded);
  const fetched = downloaded.length
    ? `downloaded ${MB(downloaded.reduce((s, w) => s + w.bytes, 0))}`
    : 'all from the cache';
  console.log(
    `CUDA provider for onnxruntime-node ${r.ortVersion}: ${r.wheels.length} wheels (${fetched}), ` +
      `${r.unpacked.length} libraries unpacked, RUNPATH ${r.runpath === 'set' ? 'set' : 'already set'}, ` +
      `links ${Object.entries(r.links)
        .map(([n, a]) => `${n} ${a}`)
        .join(', ')}`,
  );
  const except = r.missing.length ? ` except ${r.missing.join(', ')} (the NVIDIA driver's)` : '';
  console.log(`libraries in ${paths.lib}; ldd resolves all of them${except}`);
  console.log('`starpo doctor` says whether a cuda session runs here');
}

export function registerGpu(program: Command): void {
  const gpu = program.command('gpu').description('GPU execution providers: install the CUDA provider from PyPI wheels');
  gpu
    .command('install')
    .description(
      'Download the pinned onnxruntime-gpu and CUDA 13 wheels with pip into .cache/gpu, unpack the provider and ' +
        'libraries, set its RUNPATH and link it next to libonnxruntime.so.1 (idempotent; rerun after npm ci)',
    )
    .option('--with-cudnn', 'also cuDNN 9 and NVRTC (~440 MB more), which only some ops load')
    .action(install);
}
