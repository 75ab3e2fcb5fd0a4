/**
 * Lower-precision rollouts, first question: how fast is onnxruntime's block-quantized matrix product
 * (com.microsoft MatMulNBits: 8- or 4-bit weights in blocks of 32 along K, one fp32 scale per block) against the fp32
 * Gemm the engine runs today, at SmolLM2's projection shapes and decode's row counts? One JSON line per case, best of
 * 5 × 100 calls, with the load average read before it. `weights`: `input` (fed every call, as the engine feeds its
 * fp32 weights) or `initializer` (constant: onnxruntime prepacks it when the session is made). `accuracy` 4 lets
 * MatMulNBits quantize the activations to int8 and use the integer kernels (VNNI/AMX where the CPU has them).
 *
 *   node --import tsx scripts/matmul-nbits.ts [rows,…] [threads]
 */
import { loadavg } from 'node:os';
import onnxProto from 'onnx-proto';
import * as ort from 'onnxruntime-node';
import { OPSET } from '../src/policy/graph/onnx.ts';

const { onnx } = onnxProto;
const [rowsArg = '1,8,32', threadArg = '2'] = process.argv.slice(2);
const BLOCK = 32;
/** SmolLM2-135M's products: q|k|v fused (576 → 960), MLP up (576 → 1536), down (1536 → 576), the LM head. */
const SHAPES = [
  [576, 960],
  [576, 1536],
  [1536, 576],
  [576, 49152],
] as const;
const FLOAT = 1;
const UINT8 = 2;

interface Case {
  kind: 'fp32' | 'nbits';
  bits: 32 | 8 | 4;
  weights: 'input' | 'initializer';
  accuracy: 0 | 4;
}
const CASES: Case[] = [
  { kind: 'fp32', bits: 32, weights: 'input', accuracy: 0 },
  { kind: 'fp32', bits: 32, weights: 'initializer', accuracy: 0 },
  { kind: 'nbits', bits: 8, weights: 'initializer', accuracy: 0 },
  { kind: 'nbits', bits: 8, weights: 'initializer', accuracy: 4 },
  { kind: 'nbits', bits: 4, weights: 'initializer', accuracy: 4 },
  { kind: 'nbits', bits: 8, weights: 'input', accuracy: 4 },
];

const info = (name: string, elemType: number, dims: readonly number[]) => ({
  name,
  type: { tensorType: { elemType, shape: { dim: dims.map((d) => ({ dimValue: d })) } } },
});
const int = (name: string, i: number) => ({ name, type: 2, i });

/** The case's weight tensors: fp32 [N, K], or MatMulNBits' codes [N, K/32, 32·bits/8] and scales [N·K/32]. */
function weightTensors(c: Case, K: number, N: number) {
  if (c.kind === 'fp32') {
    const w = new Float32Array(N * K).map((_, i) => ((i % 13) - 6) * 1e-3);
    return [{ name: 'b', elemType: FLOAT, dims: [N, K], data: w }];
  }
  const blob = (BLOCK * c.bits) / 8;
  const codes = new Uint8Array(N * (K / BLOCK) * blob).map((_, i) => (i * 37) & 0xff);
  const scales = new Float32Array((N * K) / BLOCK).fill(1e-3);
  return [
    { name: 'b', elemType: UINT8, dims: [N, K / BLOCK, blob], data: codes },
    { name: 's', elemType: FLOAT, dims: [(N * K) / BLOCK], data: scales },
  ];
}

function modelBytes(c: Case, M: number, K: number, N: number, weights: ReturnType<typeof weightTensors>): Uint8Array {
  const bytes = (d: Float32Array | Uint8Array) => new Uint8Array(d.buffer, d.byteOffset, d.byteLength);
  const constant = c.weights === 'initializer';
  const node =
    c.kind === 'fp32'
      ? { opType: 'Gemm', input: ['a', 'b'], output: ['c'], attribute: [int('transB', 1)] }
      : {
          opType: 'MatMulNBits',
          domain: 'com.microsoft',
          input: ['a', 'b', 's'],
          output: ['c'],
          attribute: [
            int('K', K),
            int('N', N),
            int('bits', c.bits),
            int('block_size', BLOCK),
            int('accuracy_level', c.accuracy),
          ],
        };
  const graph = {
    name: 'nbits',
    input: [info('a', FLOAT, [M, K]), ...(constant ? [] : weights.map((w) => info(w.name, w.elemType, w.dims)))],
    output: [info('c', FLOAT, [M, N])],
    initializer: constant
      ? weights.map((w) => ({ name: w.name, dims: w.dims, dataType: w.elemType, rawData: bytes(w.data) }))
      : [],
    node: [node],
  };
  const opsetImport = [
    { domain: '', version: OPSET },
    { domain: 'com.microsoft', version: 1 },
  ];
  return onnx.ModelProto.encode(onnx.ModelProto.create({ irVersion: 10, opsetImport, graph })).finish();
}

async function measure(c: Case, M: number, K: number, N: number): Promise<number> {
  const weights = weightTensors(c, K, N);
  const session = await ort.InferenceSession.create(modelBytes(c, M, K, N, weights), {
    intraOpNumThreads: Number(threadArg),
    extra: { session: { intra_op: { allow_spinning: '0' } } },
  });
  const feeds: Record<string, ort.Tensor> = { a: new ort.Tensor('float32', new Float32Array(M * K).fill(0.5), [M, K]) };
  if (c.weights === 'input')
    for (const w of weights)
      feeds[w.name] = new ort.Tensor(w.elemType === FLOAT ? 'float32' : 'uint8', w.data, [...w.dims]);
  for (let i = 0; i < 10; i++) await session.run(feeds);
  let best = Infinity;
  for (let r = 0; r < 5; r++) {
    const t0 = performance.now();
    for (let i = 0; i < 100; i++) await session.run(feeds);
    best = Math.min(best, (performance.now() - t0) / 100);
  }
  await session.release();
  return best;
}

for (const M of rowsArg.split(',').map(Number)) {
  for (const [K, N] of SHAPES) {
    for (const c of CASES) {
      const load1 = Math.round(loadavg()[0] * 100) / 100;
      const ms = await measure(c, M, K, N);
      const weightBytes = (K * N * c.bits) / 8 + (c.kind === 'nbits' ? ((K * N) / BLOCK) * 4 : 0);
      const usPerCall = Math.round(ms * 1000 * 10) / 10;
      console.log(JSON.stringify({ bench: 'matmul_nbits', rows: M, K, N, ...c, usPerCall, weightBytes, load1 }));
    }
  }
}
