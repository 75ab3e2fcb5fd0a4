/**
 * What the decode program's attention relies on (programs/generate.ts, engine/README.md "A group's prompt read once a
 * step"): onnxruntime's Softmax gives a row's real entries the same bits when masked blocks of a multiple of 32
 * entries sit between them, so a row's prompt part may be padded to the call's longest prompt (rounded to 32) without
 * its numbers depending on the other rows. Fails on a CPU kernel whose vector lanes or accumulators do not divide 32.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createSession, floatTensor } from '../../../src/policy/engine/session.ts';
import { Graph } from '../../../src/policy/graph/graph.ts';
import * as o from '../../../src/policy/graph/ops.ts';
import { BLOCKED } from '../../../src/policy/model/transformer.ts';
import { Rng } from '../../../src/policy/model/rng.ts';

async function softmaxRows(rows: number, width: number, data: Float32Array): Promise<Float32Array> {
  const g = new Graph();
  g.output('y', o.softmax(g.input('x', 'float32', [rows, width])));
  const session = await createSession(g, { threads: 2, spin: false });
  const out = await session.run({ x: floatTensor(data, [rows, width]) });
  await session.release();
  return out.y.data as Float32Array;
}

test('softmax: masked blocks of 32k slots between a row’s prompt and generated scores leave every real output’s bits', async () => {
  const rng = new Rng(11);
  const scores = (n: number) => Float32Array.from({ length: n }, () => rng.next() * 8 - 4);
  for (const [prompt, generated] of [
    [100, 7],
    [241, 23],
    [17, 1],
  ]) {
    const [p, own, self] = [scores(prompt), scores(generated), scores(1)[0]];
    const N = 32;
    let first: number[] | null = null;
    for (const extra of [0, 32, 96, 256]) {
      const P = Math.ceil(prompt / 32) * 32 + extra;
      const width = P + N + 1;
      for (const rows of [1, 2, 128]) {
        const data = new Float32Array(rows * width).fill(BLOCKED);
        for (let r = 0; r < rows; r++) {
          data.set(p, r * width);
          data.set(own, r * width + P);
          data[r * width + P + N] = self;
        }
        const y = await softmaxRows(rows, width, data);
        const at = (rows - 1) * width;
        const real = [...y.subarray(at, at + prompt), ...y.subarray(at + P, at + P + generated), y[at + P + N]];
        first ??= real;
        assert.deepEqual(real, first, `prompt ${prompt}, ${extra} more masked slots, ${rows} rows`);
      }
    }
  }
});
