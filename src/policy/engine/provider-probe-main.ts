/**
 * Creates a one-node session (y = -x) on the provider named in argv[2] and runs it; prints one JSON line.
 * Running it, not only creating it, is what proves the device computes.
 */
import { Graph } from '../graph/graph.ts';
import { neg } from '../graph/ops.ts';
import { type Provider, createSession, floatTensor } from './session.ts';

try {
  const g = new Graph();
  g.output('y', neg(g.input('x', 'float32', [2])));
  const session = await createSession(g, { provider: process.argv[2] as Provider, threads: 1 });
  const y = Array.from((await session.run({ x: floatTensor(Float32Array.of(1.5, -2), [2]) })).y.data as Float32Array);
  await session.release();
  console.log(
    JSON.stringify(
      y[0] === -1.5 && y[1] === 2 ? { ok: true } : { ok: false, message: `y = -x gave [${y.join(', ')}]` },
    ),
  );
} catch (err) {
  // onnxruntime's own error (the cause), not the engine's sentence built from it.
  const e = err as Error;
  console.log(JSON.stringify({ ok: false, message: e.cause instanceof Error ? e.cause.message : e.message }));
}
