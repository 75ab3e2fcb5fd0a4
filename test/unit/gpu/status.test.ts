import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseProcVersion, parseSmi } from '../../../src/gpu/driver.ts';
import { inLoaderCache } from '../../../src/gpu/facts.ts';
import { readProbeOutput } from '../../../src/policy/engine/provider-probe.ts';
import { type CudaFacts, classifyCpu, classifyCuda, classifyWebgpu } from '../../../src/gpu/status.ts';

const H200 = { name: 'NVIDIA H200', memoryMiB: 143771, driver: '580.159.03' };
const base: CudaFacts = {
  install: { kind: 'installed', missing: [], forOrt: '1.30.0' },
  ortVersion: '1.30.0',
  cudaMajor: 13,
  minDriver: 580,
  driver: { version: '580.159.03', devices: [H200] },
  probe: { ok: true },
};
const cuda = (over: Partial<CudaFacts>) => classifyCuda({ ...base, ...over });

test('doctor says cuda is not installed, and why when the install is incomplete or made for another onnxruntime-node', () => {
  assert.deepEqual(cuda({ install: { kind: 'absent' } }), {
    provider: 'cuda',
    state: 'not-installed',
    detail: 'not installed (run `starpo gpu install`)',
  });
  assert.equal(
    cuda({ install: { kind: 'broken', reason: 'the loader cannot find libcublasLt.so.13' } }).detail,
    'not installed: the loader cannot find libcublasLt.so.13 (run `starpo gpu install`)',
  );
  assert.equal(
    cuda({ install: { kind: 'installed', missing: [], forOrt: '1.29.0' } }).detail,
    'installed for onnxruntime-node 1.29.0, this is 1.30.0 (run `starpo gpu install`)',
  );
});

test('doctor says the libraries are installed but there is no NVIDIA driver when only libcuda.so.1 is missing', () => {
  const s = cuda({
    install: { kind: 'installed', missing: ['libcuda.so.1'], forOrt: '1.30.0' },
    driver: { version: null, devices: null },
    probe: null,
  });
  assert.deepEqual(s, {
    provider: 'cuda',
    state: 'no-driver',
    detail: 'installed, no NVIDIA driver (libcuda.so.1 not found)',
  });
});

test("doctor says the driver is too old with the version found, from the driver or from CUDA's own error", () => {
  assert.equal(
    cuda({ driver: { version: '535.104.05', devices: [H200] } }).detail,
    'installed, driver too old: 535.104.05 found, the CUDA 13 provider needs ≥ 580',
  );
  const fromError = cuda({
    driver: { version: null, devices: null },
    probe: { ok: false, log: 'CUDA failure 35: CUDA driver version is insufficient for CUDA runtime version' },
  });
  assert.deepEqual(
    [fromError.state, fromError.detail],
    ['driver-too-old', 'installed, driver too old: version unknown found, the CUDA 13 provider needs ≥ 580'],
  );
});

test('doctor says there is no device when nvidia-smi lists none or CUDA says so', () => {
  assert.equal(
    cuda({ driver: { version: '580.65.06', devices: [], smiMessage: 'No devices were found' } }).detail,
    'installed, driver 580.65.06, no CUDA device (No devices were found)',
  );
  const fromError = cuda({
    driver: { version: '580.65.06', devices: null },
    probe: { ok: false, message: 'CUDA failure 100: no CUDA-capable device is detected ; GPU=0' },
  });
  assert.equal(fromError.state, 'no-device');
});

test('doctor names the device, its memory and the driver when a cuda session runs', () => {
  assert.deepEqual(cuda({}), {
    provider: 'cuda',
    state: 'working',
    detail: 'working: NVIDIA H200, 143771 MiB, driver 580.159.03',
  });
  assert.equal(
    cuda({ probe: { ok: false, message: 'CUBLAS failure 3: CUBLAS_STATUS_ALLOC_FAILED\nmore' } }).detail,
    'installed, driver 580.159.03, session failed: CUBLAS failure 3: CUBLAS_STATUS_ALLOC_FAILED',
  );
});

test('doctor tells a missing Vulkan loader from a loader without an adapter', () => {
  const noAdapter = {
    ok: false,
    message: 'webgpu_context.cc:136 ... Failed to get a WebGPU adapter: No supported adapters',
  };
  assert.equal(classifyWebgpu({ vulkanLoader: false, probe: noAdapter }).state, 'no-vulkan');
  assert.deepEqual(classifyWebgpu({ vulkanLoader: true, probe: noAdapter }), {
    provider: 'webgpu',
    state: 'no-adapter',
    detail: 'Vulkan loader found, no WebGPU adapter (no GPU, or no vendor Vulkan driver)',
  });
  assert.equal(classifyWebgpu({ vulkanLoader: true, probe: { ok: true } }).state, 'working');
  assert.deepEqual(classifyCpu({ ok: true }, 2), { provider: 'cpu', state: 'working', detail: 'working (2 threads)' });
});

test('the driver version comes from either kernel module line, and devices from nvidia-smi CSV', () => {
  assert.equal(
    parseProcVersion(
      'NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\nGCC version: gcc 12',
    ),
    '535.104.05',
  );
  assert.equal(
    parseProcVersion('NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.03  Release Build'),
    '580.159.03',
  );
  assert.equal(parseProcVersion('garbage'), null);
  assert.deepEqual(parseSmi('NVIDIA H200, 143771, 580.159.03\n'), [H200]);
  assert.deepEqual(parseSmi('No devices were found\n'), []);
});

test('the loader cache lookup matches a library by its exact name', () => {
  const out =
    "1203 libs found in cache `/etc/ld.so.cache'\n\tlibvulkan.so.1 (libc6,x86-64) => " +
    '/lib/x86_64-linux-gnu/libvulkan.so.1\n\tlibvulkan.so (libc6,x86-64) => /x\n';
  assert.equal(inLoaderCache(out, 'libvulkan.so.1'), true);
  assert.equal(inLoaderCache(out.replace(/libvulkan\.so\.1 /, 'libvulkan.so.2 '), 'libvulkan.so.1'), false);
});

test("a probe child's last JSON line is its result, with its stderr as the log; no JSON is a failure", () => {
  assert.deepEqual(
    readProbeOutput('noise\n{"ok":false,"message":"Failed to load shared library"}\n', 'libcuda.so.1: cannot open'),
    { ok: false, message: 'Failed to load shared library', log: 'libcuda.so.1: cannot open' },
  );
  assert.deepEqual(readProbeOutput('', 'Segmentation fault', 'killed by SIGSEGV'), {
    ok: false,
    message: 'probe process failed: killed by SIGSEGV',
    log: 'Segmentation fault',
  });
});
