/**
 * The int8 rollout decode (PolicyOptions.rolloutWeights 'int8'): the block quantization, onnxruntime's MatMulNBits
 * reading it as model/quantize.ts writes it, and a policy whose decode step runs on weights quantized once per
 * weight version, never stale, a row's tokens independent of its batch.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { Policy } from '../../../src/policy/engine/policy.ts';
import { createSession } from '../../../src/policy/engine/session.ts';
import { Graph } from '../../../src/policy/graph/graph.ts';
import { matMulNBits } from '../../../src/policy/graph/ops.ts';
import { toOnnx } from '../../../src/policy/graph/onnx.ts';
import { tinyConfig } from './tiny-config.ts';
import {
  QUANT_ACCURACY,
  QUANT_BLOCK,
  dequantizeInt8,
  quantizeInt8,
  quantizedViews,
} from '../../../src/policy/model/quantize.ts';
import { buildLayout } from '../../../src/policy/model/layout.ts';
import * as ort from 'onnxruntime-node';

/** Deterministic values in (−1, 1). */
const values = (n: number, salt: number) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 12.9898 + salt));

test('int8 blocks: every weight within half a step of its block scale, a zero block stays zero', () => {
  const [rows, cols] = [3, 40]; // the second block of each row is partial (8 of 32)
  const w = values(rows * cols, 1);
  w.fill(0, cols, cols + QUANT_BLOCK); // row 1's first block
  const q = quantizeInt8(w, rows, cols);
  assert.equal(q.codes.length, rows * 2 * QUANT_BLOCK);
  assert.equal(q.scales[2], 0);
  const back = dequantizeInt8(q, rows, cols);
  for (let r = 0; r < rows; r++)
    for (let c = 0; c < cols; c++) {
      const scale = q.scales[r * 2 + Math.floor(c / QUANT_BLOCK)];
      const err = Math.abs(back[r * cols + c] - w[r * cols + c]);
      assert.ok(err <= scale / 2 + 1e-7, `[${r}, ${c}] off by ${err} at scale ${scale}`);
    }
  for (const c of q.codes) assert.ok(c >= 1 && c <= 255);
  assert.ok(
    [...q.codes.subarray(40, 64)].every((c) => c === 128),
    'the padding of a partial block is zero',
  );
});

test('onnxruntime MatMulNBits reads the codes as written: (code − 128) · scale, baked as initializers', async () => {
  const [M, K, N] = [2, 40, 3];
  const q = quantizeInt8(values(N * K, 2), N, K);
  // Integers whose block maxima are 127: the int8 quantization of x at accuracy level 4 is then exact.
  const x = Float32Array.from({ length: M * K }, (_, i) => ((i % K) % 32 === 5 ? 127 : ((i * 37) % 255) - 127));
  const g = new Graph();
  const w = {
    codes: g.input('codes', 'uint8', [N, 2, QUANT_BLOCK]),
    scales: g.input('scales', 'float32', [N * 2]),
    bits: 8,
    blockSize: QUANT_BLOCK,
  };
  g.output('y', matMulNBits(g.input('x', 'float32', [M, K]), w, QUANT_ACCURACY));
  const bytes = toOnnx(
    g,
    'int8',
    new Map<string, Uint8Array | Float32Array>([
      ['codes', q.codes],
      ['scales', q.scales],
    ]),
  );
  const session = await createSession(bytes, { threads: 1 });
  assert.deepEqual(session.inputNames, ['x'], 'baked inputs are initializers, not inputs');
  const y = (await session.run({ x: new ort.Tensor('float32', x, [M, K]) })).y.data as Float32Array;
  await session.release();
  const wq = dequantizeInt8(q, N, K);
  for (let m = 0; m < M; m++)
    for (let n = 0; n < N; n++) {
      let want = 0;
      for (let k = 0; k < K; k++) want += x[m * K + k] * wq[n * K + k];
      assert.ok(
        Math.abs(y[m * N + n] - want) <= 1e-4 * Math.max(1, Math.abs(want)),
        `[${m}, ${n}] ${y[m * N + n]} vs ${want}`,
      );
    }
});

const config = tinyConfig('qwen2', 0.05);
const PROMPTS = Array.from({ length: 5 }, (_, r) =>
  Array.from({ length: 9 + 3 * r }, (_, i) => (i * 31 + 7 * r) % 300),
);
const request = (prompts: number[][], rowSeeds = prompts.map((_, i) => i)) => ({
  prompts,
  maxNewTokens: 12,
  sampling: { temperature: 1 },
  rowSeeds,
  stopTokenIds: [],
});
const policies: Policy[] = [];
const policy = (opts: Partial<ConstructorParameters<typeof Policy>[0]> = {}) => {
  const p = new Policy({ config, seed: 3, threads: 1, rolloutWeights: 'int8', ...opts });
  policies.push(p);
  return p;
};
after(() => Promise.all(policies.map((p) => p.close())));

const batch = {
  batch: 1,
  seqLen: 6,
  tokens: Int32Array.of(3, 4, 5, 6, 7, 8),
  attentionMask: new Float32Array(6).fill(1),
  lossMask: Float32Array.of(0, 1, 1, 1, 1, 1),
};
const sft = { loss: { kind: 'sft', aggregation: 'token-mean' }, lr: 0.05 } as const;

test('the int8 decode samples near the float32 model, and its log-probs are its own (not the float32 ones)', async () => {
  const [int8, f32] = [policy(), policy({ rolloutWeights: 'float32' })];
  const gens = await int8.generate(request(PROMPTS));
  const keys = (tied: boolean) => quantizedViews(buildLayout({ ...config, tieWordEmbeddings: tied })).map((v) => v.key);
  const projections = ['0.qkv', '0.o', '0.gate', '0.up', '0.down', '1.qkv', '1.o', '1.gate', '1.up', '1.down'];
  assert.deepEqual(keys(false), [...projections, 'lm_head']);
  assert.deepEqual(keys(true), [...projections, 'embed'], 'a tied head is read through the embedding');
  let gap = 0;
  let count = 0;
  for (const [r, g] of gens.entries()) {
    const tokens = Int32Array.from([...PROMPTS[r], ...g.tokens]);
    const attentionMask = new Float32Array(tokens.length).fill(1);
    const { logprobs } = await f32.score({ batch: 1, seqLen: tokens.length, tokens, attentionMask });
    g.tokens.forEach((_, i) => {
      // the first token comes from the float32 prefill, the rest from the int8 decode step
      const d = Math.abs(logprobs![PROMPTS[r].length + i] - g.logprobs[i]);
      if (i === 0) assert.ok(d < 1e-5, `row ${r}: the prefill's token is float32's (${d})`);
      else [gap, count] = [gap + d, count + 1];
    });
  }
  const mean = gap / count;
  assert.ok(mean > 1e-6 && mean < 0.05, `mean |log-prob gap| of the int8 decode ${mean}`);
  assert.equal(int8.int8Decode!.quantizations, 1);
});

test("a row's int8 tokens do not depend on its batch (alone, in 4, in 16 rows), and repeat bit for bit", async () => {
  const p = policy();
  const row = PROMPTS[2];
  const alone = await p.generate(request([row], [11]));
  const inFour = await p.generate(request([PROMPTS[0], row, PROMPTS[1], PROMPTS[3]], [0, 11, 1, 3]));
  const sixteen = Array.from({ length: 16 }, (_, i) => PROMPTS[i % 5]);
  sixteen[9] = row;
  const inSixteen = await p.generate(
    request(
      sixteen,
      sixteen.map((_, i) => (i === 9 ? 11 : i)),
    ),
  );
  assert.deepEqual(inFour[1], alone[0]);
  assert.deepEqual(inSixteen[9], alone[0]);
  assert.deepEqual(await p.generate(request([row], [11])), alone);
});

test('full model: a train step re-quantizes, and the decode then equals a fresh policy on the new weights', async () => {
  const p = policy();
  const before = await p.generate(request(PROMPTS));
  await p.trainStep(batch, sft);
  const after = await p.generate(request(PROMPTS));
  assert.equal(p.int8Decode!.quantizations, 2);
  assert.notDeepEqual(after, before);
  const fresh = policy();
  fresh.setParams(p.getParams());
  assert.deepEqual(await fresh.generate(request(PROMPTS)), after, 'no session of the old weights was used');
});

test('LoRA: a train step moves only the adapters (fed), so the base is quantized once; setBase quantizes again', async () => {
  const lora = { rank: 2, alpha: 4, dropout: 0, targets: ['q', 'v', 'down'] } as const;
  const p = policy({ lora });
  const fed = policy({ lora, rolloutWeights: 'float32' });
  await p.generate(request(PROMPTS));
  await p.trainStep(batch, sft);
  await fed.trainStep(batch, sft);
  const trained = await p.generate(request(PROMPTS));
  assert.equal(p.int8Decode!.quantizations, 1);
  assert.notDeepEqual(
    trained.map((g) => g.logprobs),
    (await fed.generate(request(PROMPTS))).map((g) => g.logprobs),
  );
  const fresh = policy({ lora });
  fresh.setParams(p.getParams());
  assert.deepEqual(await fresh.generate(request(PROMPTS)), trained, 'the adapters enter the int8 decode as trained');
  const other = (await policy({ seed: 9, rolloutWeights: 'float32' }).getState(false)).weights;
  p.setBase(other);
  const rebased = await p.generate(request(PROMPTS));
  assert.equal(p.int8Decode!.quantizations, 2);
  assert.notDeepEqual(rebased, trained);
});

test('int8 rollouts are refused on another provider, before anything runs', () => {
  assert.throws(() => policy({ provider: 'cuda' }), /rolloutWeights: int8 rollouts run on the CPU provider only/);
});
