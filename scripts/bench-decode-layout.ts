/**
 * A decode step's 151 fp32 products (SmolLM2-135M-Instruct's shapes: 30 layers of q|k|v, o, gate|up and down, then
 * the LM head), each over weights of its own (538 MB in all, so none is read from cache), in one session: as the
 * engine computes them, `Gemm(x, W, transB=1)` with W stored [out, in], against `MatMul(x, W)` with W stored
 * transposed [in, out]; then the LM head alone (113 MB) both ways. Best wall-clock per step, the weights' read rate,
 * and whether the outputs are equal bit for bit. JSON lines, with the load average.
 *
 *   node --import tsx scripts/bench-decode-layout.ts [threads] [rows,…]
 */
import { loadavg } from 'node:os';
import { timeIt } from '../src/bench/engine.ts';
import { createSession, floatTensor, type OrtTensor } from '../src/policy/engine/session.ts';
import { Graph } from '../src/policy/graph/graph.ts';
import * as o from '../src/policy/graph/ops.ts';

const threads = Number(process.argv[2] ?? 2);
const rowCounts = (process.argv[3] ?? '1,8,32,128').split(',').map(Number);
const LAYER = [
  ['qkv', 576, 960],
  ['o', 576, 576],
  ['gate_up', 576, 3072],
  ['down', 1536, 576],
] as const;
const PRODUCTS: readonly (readonly [k: number, n: number])[] = [
  ...Array.from({ length: 30 }, () => LAYER.map(([, k, n]) => [k, n] as const)).flat(),
  [576, 49152],
];
const BYTES = PRODUCTS.reduce((sum, [k, n]) => sum + k * n * 4, 0);
type Form = 'transB' | 'transposed';

const values = (n: number, salt: number) =>
  Float32Array.from({ length: n }, (_, i) => Math.sin(i * 12.9898 + salt) * 0.05);

/** W [n, k] row-major as [k, n]. */
function transpose(w: Float32Array, k: number, n: number): Float32Array {
  const t = new Float32Array(k * n);
  for (let r = 0; r < n; r++) for (let c = 0; c < k; c++) t[c * n + r] = w[r * k + c];
  return t;
}

const weights = PRODUCTS.map(([k, n], i) => values(k * n, i + 1));
let transposedWeights: Float32Array[] | undefined; // made once, on first use: 538 MB to copy
const weightsAs = (form: Form): Float32Array[] =>
  form === 'transB' ? weights : (transposedWeights ??= weights.map((w, i) => transpose(w, ...PRODUCTS[i])));

/** The products (all, or the LM head's alone) in one session: its best wall-clock and its outputs. */
async function step(rows: number, form: Form, headOnly: boolean): Promise<{ ms: number; outputs: Float32Array[] }> {
  const first = headOnly ? PRODUCTS.length - 1 : 0;
  const products = PRODUCTS.slice(first);
  const stored = weightsAs(form).slice(first);
  const g = new Graph();
  const inputs = new Map([576, 1536].map((k) => [k, g.input(`x${k}`, 'float32', [rows, k])]));
  const shape = (k: number, n: number) => (form === 'transB' ? [n, k] : [k, n]);
  products.forEach(([k, n], i) => {
    const w = g.input(`w${i}`, 'float32', shape(k, n));
    const x = inputs.get(k)!;
    g.output(`y${i}`, form === 'transB' ? o.gemm(x, w, 0, 1) : o.matmul(x, w));
  });
  const session = await createSession(g, { threads, spin: false });
  const feeds: Record<string, OrtTensor> = {};
  for (const k of inputs.keys()) feeds[`x${k}`] = floatTensor(values(rows * k, k), [rows, k]);
  products.forEach(([k, n], i) => (feeds[`w${i}`] = floatTensor(stored[i], shape(k, n))));
  const t = await timeIt(() => session.run(feeds), 6, 2, 0.3);
  const out = await session.run(feeds);
  const outputs = products.map((_, i) => Float32Array.from(out[`y${i}`].data as Float32Array));
  await session.release();
  return { ms: t.best * 1e3, outputs };
}

for (const [rows, headOnly] of rowCounts.flatMap((r) => [[r, false] as const, [r, true] as const])) {
  const load = loadavg()[0];
  const [engine, transposed] = [await step(rows, 'transB', headOnly), await step(rows, 'transposed', headOnly)];
  const bytes = headOnly ? 576 * 49152 * 4 : BYTES;
  let maxDiff = 0;
  engine.outputs.forEach((y, i) =>
    y.forEach((v, j) => (maxDiff = Math.max(maxDiff, Math.abs(v - transposed.outputs[i][j])))),
  );
  console.log(
    JSON.stringify({
      bench: 'decode_layout',
      products: headOnly ? 'lm_head' : 'all',
      rows,
      threads,
      gemmTransBMs: +engine.ms.toFixed(2),
      matmulTransposedMs: +transposed.ms.toFixed(2),
      speedup: +(engine.ms / transposed.ms).toFixed(2),
      readGBs: {
        gemmTransB: +(bytes / engine.ms / 1e6).toFixed(1),
        matmulTransposed: +(bytes / transposed.ms / 1e6).toFixed(1),
      },
      bitwiseEqual: engine.outputs.every((y, i) => y.every((v, j) => Object.is(v, transposed.outputs[i][j]))),
      maxDiff,
      load: +load.toFixed(2),
    }),
  );
}
