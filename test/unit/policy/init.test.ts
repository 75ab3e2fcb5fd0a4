import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Policy } from '../../../src/policy/engine/policy.ts';
import { parseModelConfig } from '../../../src/policy/io/config.ts';
import { PARALLEL_INIT_MIN, initParamsParallel } from '../../../src/policy/model/init-parallel.ts';
import { buildLayout } from '../../../src/policy/model/layout.ts';
import { INIT_CHUNK, initParams } from '../../../src/policy/model/params.ts';
import { Rng } from '../../../src/policy/model/rng.ts';

const bytes = (a: Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

test('Rng keeps the xoshiro128** stream it drew before it used the shared generator (seed, stream, normals)', () => {
  const r = new Rng(7);
  assert.deepEqual([r.nextU32(), r.nextU32(), r.next()], [1004282400, 2200021487, 0.44891458133395923]);
  const x = new Float32Array(4);
  Rng.forStream(11, 3, 5).fillNormal(x, 0, 4, 1);
  assert.deepEqual(Array.from(x), [0.04736362397670746, 2.1993091106414795, -1.520806908607483, -1.6269336938858032]);
});

test('the ziggurat normal has the moments and tails of N(0, 1) (1M draws, tail path included)', () => {
  const n = 1 << 20;
  const x = new Float32Array(n);
  new Rng(7).fillNormal(x, 0, n, 1);
  let [m1, m2, m4, over3, over4] = [0, 0, 0, 0, 0];
  for (const v of x)
    [m1, m2, m4, over3, over4] = [
      m1 + v,
      m2 + v * v,
      m4 + v ** 4,
      over3 + (Math.abs(v) > 3 ? 1 : 0),
      over4 + (Math.abs(v) > 4 ? 1 : 0),
    ];
  assert.ok(Math.abs(m1 / n) < 5 / Math.sqrt(n), `mean ${m1 / n}`);
  assert.ok(Math.abs(m2 / n - 1) < 0.01, `variance ${m2 / n}`);
  assert.ok(Math.abs(m4 / n - 3) < 0.05, `fourth moment ${m4 / n}`);
  assert.ok(Math.abs(over3 / n - 0.0026998) < 0.0004, `P(|x| > 3) = ${over3 / n}`);
  // beyond the base strip's edge 3.44: the tail method
  assert.ok(over4 > 20 && over4 < 120, `P(|x| > 4): ${over4} of ${n} (expect 66)`);
  const again = new Float32Array(n);
  new Rng(7).fillNormal(again, 0, n, 1);
  assert.ok(bytes(x).equals(bytes(again)));
});

test('initialisation is drawn in independent chunks: the same on several threads as on one, and from the seed alone', async () => {
  const config = parseModelConfig({
    model_type: 'qwen2',
    vocab_size: 32768,
    hidden_size: 512,
    intermediate_size: 64,
    num_hidden_layers: 1,
    num_attention_heads: 4,
    tie_word_embeddings: true,
  });
  const layout = buildLayout(config);
  assert.ok(layout.groups.matrices > PARALLEL_INIT_MIN && layout.groups.matrices > 8 * INIT_CHUNK);
  const serial = initParams(layout, 11);
  const parallel = await initParamsParallel(layout, 11, 3);
  assert.ok(bytes(serial.matrices).equals(bytes(parallel.matrices)));
  assert.ok(bytes(serial.vectors).equals(bytes(parallel.vectors)));
  const std = Math.sqrt(serial.matrices.reduce((s, v) => s + v * v, 0) / serial.matrices.length);
  assert.ok(Math.abs(std - config.initializerRange) < 1e-4, `std ${std}`);
  const [c0, c1] = [serial.matrices.subarray(0, 8), serial.matrices.subarray(INIT_CHUNK, INIT_CHUNK + 8)];
  assert.ok(!bytes(c0).equals(bytes(c1)), 'chunks draw from different streams');
  assert.ok(!bytes(initParams(layout, 12).matrices.subarray(0, 64)).equals(bytes(serial.matrices.subarray(0, 64))));
});

test('Policy.initialize draws what lazy initialisation draws, for a plain policy and a LoRA base', async () => {
  const config = parseModelConfig({
    model_type: 'qwen2',
    vocab_size: 50,
    hidden_size: 16,
    intermediate_size: 24,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 2,
  });
  const lora = { rank: 2, alpha: 4, dropout: 0 as const, targets: ['q', 'down'] as const };
  for (const opts of [{}, { lora }]) {
    const [lazy, eager] = [
      new Policy({ config, seed: 4, threads: 2, ...opts }),
      new Policy({ config, seed: 4, threads: 2, ...opts }),
    ];
    await eager.initialize();
    assert.ok(bytes(lazy.getParams().matrices).equals(bytes(eager.getParams().matrices)));
    if (opts.lora) assert.ok(bytes(lazy.getBase()!.matrices).equals(bytes(eager.getBase()!.matrices)));
  }
});
