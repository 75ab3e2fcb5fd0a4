/**
 * Decode-shaped fp32 products of SmolLM2-135M-Instruct (width 576, MLP 1,536, vocabulary 49,152; q/k/v fused 960 wide,
 * gate/up 3,072) with the weights fed as session inputs, as the engine feeds them (MLAS packs the right operand on
 * every call), against the same weights as initializers (packed once when the session is created): best CPU
 * milliseconds on one thread (or best wall-clock on more), and whether the two outputs are equal bit for bit. JSON
 * lines, with the load average.
 *
 *   node --import tsx scripts/bench-prepack.ts [threads] [rows,…]
 */
import { loadavg } from 'node:os';
import { timeIt } from '../src/bench/engine.ts';
import { createSession, floatTensor, type OrtTensor } from '../src/policy/engine/session.ts';
import { Graph } from '../src/policy/graph/graph.ts';
import * as o from '../src/policy/graph/ops.ts';

const threads = Number(process.argv[2] ?? 1);
const rowCounts = (process.argv[3] ?? '1,8,32,128').split(',').map(Number);
const PRODUCTS: readonly (readonly [name: string, k: number, n: number, transB: boolean])[] = [
  ['qkv', 576, 960, false],
  ['o', 576, 576, false],
  ['gate_up', 576, 3072, false],
  ['down', 1536, 576, false],
  ['lm_head', 576, 49152, true],
];
const values = (n: number, salt: number) =>
  Float32Array.from({ length: n }, (_, i) => Math.sin(i * 12.9898 + salt) * 0.05);

/** One product [rows, k] · B in a session of its own, B an input or an initializer: its time and its output. */
async function product(rows: number, k: number, n: number, transB: boolean, packed: boolean) {
  const g = new Graph();
  const a = g.input('a', 'float32', [rows, k]);
  const shape = transB ? [n, k] : [k, n];
  const weights = values(k * n, 1);
  const b = packed ? g.initializer('b', 'float32', shape, weights) : g.input('b', 'float32', shape);
  g.output('c', transB ? o.gemm(a, b, 0, 1) : o.matmul(a, b));
  const session = await createSession(g, { threads, spin: false });
  const feeds: Record<string, OrtTensor> = { a: floatTensor(values(rows * k, 2), [rows, k]) };
  if (!packed) feeds.b = floatTensor(weights, shape);
  const fetch = { c: floatTensor(new Float32Array(rows * n), [rows, n]) };
  const t = await timeIt(() => session.run(feeds, fetch), 5, 2, 0.3);
  await session.release();
  return { ms: (threads === 1 ? t.cpu : t.best) * 1e3, out: Float32Array.from(fetch.c.data as Float32Array) };
}

for (const rows of rowCounts) {
  for (const [name, k, n, transB] of PRODUCTS) {
    const load = loadavg()[0];
    const [asInput, asInitializer] = [
      await product(rows, k, n, transB, false),
      await product(rows, k, n, transB, true),
    ];
    console.log(
      JSON.stringify({
        bench: 'prepack',
        rows,
        product: name,
        k,
        n,
        threads,
        inputMs: +asInput.ms.toFixed(2),
        initializerMs: +asInitializer.ms.toFixed(2),
        speedup: +(asInput.ms / asInitializer.ms).toFixed(2),
        bitwiseEqual: asInput.out.every((v, i) => Object.is(v, asInitializer.out[i])),
        load: +load.toFixed(2),
      }),
    );
  }
}
