import assert from 'node:assert/strict';
import { test } from 'node:test';
import { grad } from '../../../src/policy/autodiff/grad.ts';
import { Policy } from '../../../src/policy/engine/policy.ts';
import { createSession, tensor } from '../../../src/policy/engine/session.ts';
import { Graph, type Value } from '../../../src/policy/graph/graph.ts';
import { liveNodes } from '../../../src/policy/graph/onnx.ts';
import * as o from '../../../src/policy/graph/ops.ts';
import { parseModelConfig } from '../../../src/policy/io/config.ts';
import * as composite from '../../../src/policy/model/composite.ts';
import { buildLayout } from '../../../src/policy/model/layout.ts';
import { DEFAULT_ADAMW } from '../../../src/policy/programs/adamw.ts';
import { programOptions } from '../../../src/policy/graph/program-options.ts';
import { buildViewGradGraph } from '../../../src/policy/programs/train.ts';
import { rand } from './gradcheck.ts';

/** Runs float64 `pairs` of (written-out, chain-rule) forms of one function and compares values and gradients. */
async function samePairs(
  inputs: Record<string, number[]>,
  pairs: [(v: Record<string, Value>) => Value, (v: Record<string, Value>) => Value, string[]][],
) {
  const g = new Graph('float64');
  const vs = Object.fromEntries(Object.entries(inputs).map(([n, shape]) => [n, g.input(n, 'float64', shape)]));
  pairs.forEach(([written, reference, wrt], p) => {
    for (const [j, f] of [written, reference].entries()) {
      const y = f(vs);
      const w = g.constant(rand(y.size, 100 + p, -1, 1), 'float64', y.shape);
      g.output(`y${p}_${j}`, y);
      grad(
        o.reduceSum(o.mul(y, w), [...y.shape.keys()], false),
        wrt.map((n) => vs[n]),
      ).forEach((d, k) => g.output(`d${p}_${j}_${k}`, d));
    }
  });
  const feeds = Object.fromEntries(
    Object.entries(inputs).map(([n, shape], i) => [
      n,
      tensor(
        'float64',
        shape,
        rand(
          shape.reduce((a, b) => a * b, 1),
          i + 1,
          -2,
          2,
        ),
      ),
    ]),
  );
  const r = await (await createSession(g, { threads: 1 })).run(feeds);
  const written = Object.keys(r).filter((k) => /^[yd]\d+_0(_\d+)?$/.test(k));
  assert.equal(
    written.length,
    pairs.reduce((n, p) => n + 1 + p[2].length, 0),
  );
  for (const name of written) {
    const other = name.replace(/^([yd]\d+)_0/, '$1_1');
    const [a, b] = [r[name].data as Float64Array, r[other].data as Float64Array];
    a.forEach((v, j) =>
      assert.ok(Math.abs(v - b[j]) < 1e-11 * Math.max(1, Math.abs(b[j])), `${name}[${j}]: ${v} vs ${b[j]}`),
    );
  }
}

test('recomputing backwards (attention weights, SwiGLU) equal the chain rule through the kept tensors, values and gradients', async () => {
  const [B, K, G, T, E] = [2, 2, 3, 5, 4];
  const bias = (g: Graph) =>
    g.constant(
      Array.from({ length: T * T }, (_, i) => (i % T <= Math.floor(i / T) ? 0 : -1e9)),
      'float64',
      [1, 1, 1, T, T],
    );
  const probs = (s: Value) =>
    o.reshape(o.softmax(o.add(o.reshape(s, [B, K, G, T, T]), bias(s.graph))), [B, K, G * T, T]);
  await samePairs({ q: [B, K, G * T, E], k: [B, K, T, E], v: [B, K, T, E], x: [6, 7], u: [6, 7] }, [
    [
      (v) => composite.attendRecomputed(v.q, v.k, v.v, probs),
      (v) => o.matmul(probs(o.matmul(v.q, o.transposeLast(v.k))), v.v),
      ['q', 'k', 'v'],
    ],
    [(v) => composite.swiglu(v.x, v.u), (v) => o.mul(composite.silu(v.x), v.u), ['x', 'u']],
  ]);
});

test('the LM-head composite equals log-softmax + gather + entropy by the chain rule, with and without the entropy gradient', async () => {
  const [N, D, V] = [5, 4, 9];
  const reference = (v: Record<string, Value>, targets: Value) => {
    const lp = composite.logSoftmax(o.gemm(v.h, v.w, 0, 1));
    const logp = o.gatherElements(lp, targets, 1);
    return o.concat([logp, o.neg(o.reduceSum(o.mul(o.exp(lp), lp), [1]))], 1);
  };
  const onlyLogp = (y: Value) => o.mul(y, y.graph.constant([1, 0], 'float64', [1, 2])); // the entropy takes no gradient
  const t = (g: Graph) => g.constant([0, 3, 8, 3, 5], 'int64', [N, 1]);
  await samePairs({ h: [N, D], w: [V, D] }, [
    [(v) => composite.headStats(v.h, v.w, t(v.h.graph), true), (v) => reference(v, t(v.h.graph)), ['h', 'w']],
    [
      (v) => onlyLogp(composite.headStats(v.h, v.w, t(v.h.graph), false)),
      (v) => onlyLogp(reference(v, t(v.h.graph))),
      ['h', 'w'],
    ],
    // In chunks of 2, 2 and 1 rows (18 logits at most), each chunk's backward recomputing its logits.
    [(v) => composite.headStats(v.h, v.w, t(v.h.graph), true, 18), (v) => reference(v, t(v.h.graph)), ['h', 'w']],
    [
      (v) => onlyLogp(composite.headStats(v.h, v.w, t(v.h.graph), false, 18)),
      (v) => onlyLogp(reference(v, t(v.h.graph))),
      ['h', 'w'],
    ],
  ]);
});

test('over headChunkElements the LM head runs in row chunks: no [rows, V] tensor wider than a chunk, same training', async () => {
  const V = 300;
  const config = parseModelConfig({
    model_type: 'llama',
    vocab_size: V,
    hidden_size: 8,
    intermediate_size: 16,
    num_hidden_layers: 1,
    num_attention_heads: 2,
    num_key_value_heads: 1,
    max_position_embeddings: 32,
    tie_word_embeddings: true,
  });
  const [B, T] = [3, 16];
  const loss = { kind: 'sft', aggregation: 'token-mean' } as const;
  const headOf = (headChunkElements: number) => {
    const spec = {
      batch: B,
      seqLen: T,
      loss,
      optim: DEFAULT_ADAMW,
      options: programOptions({ headChunkElements, onehotMaxElements: 0 }),
    };
    const nodes = liveNodes(buildViewGradGraph(buildLayout(config, 'actor'), spec, false).graph);
    const rows = nodes.flatMap((n) => n.outputs.filter((v) => v.rank === 2 && v.shape[1] === V).map((v) => v.shape[0]));
    const logitGemms = nodes.filter((n) => n.op === 'Gemm' && n.outputs[0]!.shape[1] === V).length;
    return { rows: Math.max(...rows), logitGemms };
  };
  assert.deepEqual(headOf(Infinity), { rows: B * T, logitGemms: 1 });
  // 48 rows in 10 chunks (9 of 5, one of 3), each chunk's logits formed again in the backward, not kept.
  assert.deepEqual(headOf(5 * V), { rows: 5, logitGemms: 20 });
  const batch = {
    batch: B,
    seqLen: T,
    tokens: Int32Array.from({ length: B * T }, (_, i) => (i * 37) % V),
    attentionMask: new Float32Array(B * T).fill(1),
    lossMask: new Float32Array(B * T).fill(1),
  };
  const run = async (headChunkElements: number) => {
    const policy = new Policy({ config, seed: 2, threads: 1, program: { headChunkElements, onehotMaxElements: 0 } });
    const metrics = [];
    for (let i = 0; i < 2; i++) metrics.push(await policy.trainStep(batch, { loss, lr: 1e-2 }));
    const scores = await policy.score(batch);
    const m = policy.getMoments()!.m.matrices.slice();
    await policy.close();
    return { metrics, m, scores };
  };
  const [a, b] = [await run(5 * V), await run(Infinity)];
  a.metrics.forEach((m, s) =>
    Object.keys(m).forEach((k) =>
      assert.ok(Math.abs(m[k] - b.metrics[s][k]) <= 1e-5 * Math.max(1, Math.abs(m[k])), `step ${s} ${k}`),
    ),
  );
  const mMax = b.m.reduce((x, y) => Math.max(x, Math.abs(y)), 0);
  a.m.forEach((x, i) => assert.ok(Math.abs(x - b.m[i]) <= 1e-4 * mMax, `m ${i}: ${x} vs ${b.m[i]}`));
  // A Gemm over 5 rows need not round as one over 48 does.
  a.scores.logprobs!.forEach((x, i) => assert.ok(Math.abs(x - b.scores.logprobs![i]) <= 1e-5, `logprob ${i}`));
});

test("a tied embedding's gradient is scattered into the LM head's: no [V, D] zeros and no [V, D] sum in the program", () => {
  // 16 tokens · 40000 > embeddingOptions.onehotMaxElements: the embedding's gradient is a
  // scatter (a one-hot Gemm below)
  const config = parseModelConfig({
    model_type: 'qwen2',
    vocab_size: 40000,
    hidden_size: 8,
    intermediate_size: 8,
    num_hidden_layers: 1,
    num_attention_heads: 2,
    tie_word_embeddings: true,
  });
  const { graph } = buildViewGradGraph(
    buildLayout(config),
    { batch: 2, seqLen: 8, loss: { kind: 'sft', aggregation: 'token-mean' }, optim: DEFAULT_ADAMW },
    false,
  );
  const table = (n: { outputs: Value[] }) => n.outputs.some((v) => v.shape.join() === '40000,8');
  const ops = liveNodes(graph)
    .filter(table)
    .map((n) => n.op);
  // the head's dW, the scatter into it (then the output)
  assert.deepEqual(ops.sort(), ['Gemm', 'ScatterElements'], ops.join());
});

test('train_step with the recomputing backwards equals the one that keeps the tensors (float32, 2 steps)', async () => {
  const config = parseModelConfig({
    model_type: 'qwen3',
    vocab_size: 40,
    hidden_size: 32,
    intermediate_size: 48,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    head_dim: 8,
    tie_word_embeddings: true,
  });
  const [B, T] = [3, 16];
  const batch = {
    batch: B,
    seqLen: T,
    tokens: Int32Array.from({ length: B * T }, (_, i) => (i * 11) % 40),
    attentionMask: new Float32Array(B * T).fill(1),
    lossMask: new Float32Array(B * T).fill(1),
  };
  const run = async (recompute: boolean) => {
    const policy = new Policy({ config, seed: 2, threads: 1, program: { kernels: { recompute } } });
    const metrics = [];
    for (let i = 0; i < 2; i++)
      metrics.push(await policy.trainStep(batch, { loss: { kind: 'sft', aggregation: 'token-mean' }, lr: 1e-2 }));
    const m = policy.getMoments()!.m.matrices.slice();
    const nodes = policy.programs.compiles.map((c) => c.nodes);
    await policy.close();
    return { metrics, m, nodes };
  };
  const [a, b] = [await run(true), await run(false)];
  assert.notDeepEqual(a.nodes, b.nodes); // the option reached the graphs
  a.metrics.forEach((m, s) =>
    Object.keys(m).forEach((k) =>
      assert.ok(
        Math.abs(m[k] - b.metrics[s][k]) <= 1e-5 * Math.max(1, Math.abs(m[k])),
        `step ${s} ${k}: ${m[k]} vs ${b.metrics[s][k]}`,
      ),
    ),
  );
  const mMax = b.m.reduce((x, y) => Math.max(x, Math.abs(y)), 0);
  a.m.forEach((x, i) => assert.ok(Math.abs(x - b.m[i]) <= 1e-4 * mMax, `m ${i}: ${x} vs ${b.m[i]}`));
});
