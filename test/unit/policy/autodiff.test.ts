import assert from 'node:assert/strict';
import { test } from 'node:test';
import { grad } from '../../../src/policy/autodiff/grad.ts';
import { PRIMITIVE_OPS, type PrimitiveOp } from '../../../src/policy/autodiff/rules.ts';
import { programOptions } from '../../../src/policy/graph/program-options.ts';
import { type Graph, Graph as G, GraphError, type Value } from '../../../src/policy/graph/graph.ts';
import * as o from '../../../src/policy/graph/ops.ts';
import * as composite from '../../../src/policy/model/composite.ts';
import { createSession, tensor } from '../../../src/policy/engine/session.ts';
import { gradCheck, rand } from './gradcheck.ts';

type Case = { shapes: number[][]; f: (v: Value[], g: Graph) => Value; lo?: number; hi?: number; tol?: number };
const idx = (g: Graph, xs: number[], shape = [xs.length]): Value => g.constant(xs, 'int64', shape);

/** One or more cases per primitive op; each loss is sum(out · w) with a fixed random w. */
const CASES: Record<PrimitiveOp, Case[]> = {
  Identity: [{ shapes: [[3]], f: ([a]) => o.identity(a) }],
  Add: [
    { shapes: [[2, 3], [3]], f: ([a, b]) => o.add(a, b) },
    {
      shapes: [
        [2, 1],
        [1, 3],
      ],
      f: ([a, b]) => o.add(a, b),
    },
  ],
  Sub: [
    {
      shapes: [
        [2, 3],
        [2, 1],
      ],
      f: ([a, b]) => o.sub(a, b),
    },
  ],
  Mul: [
    { shapes: [[4, 3], [3]], f: ([a, b]) => o.mul(a, b) },
    { shapes: [[3, 3]], f: ([a]) => o.mul(a, a) },
  ],
  Div: [
    {
      shapes: [
        [2, 3],
        [2, 3],
      ],
      f: ([a, b]) => o.div(a, b),
      lo: 0.5,
      hi: 2,
    },
  ],
  Pow: [
    { shapes: [[5], [5]], f: ([a, b]) => o.pow(a, b), lo: 0.5, hi: 2 },
    { shapes: [[4]], f: ([a]) => o.pow(a, 3) },
  ],
  Neg: [{ shapes: [[3]], f: ([a]) => o.neg(a) }],
  Exp: [{ shapes: [[3]], f: ([a]) => o.exp(a) }],
  Log: [{ shapes: [[3]], f: ([a]) => o.log(a), lo: 0.5, hi: 2 }],
  Sqrt: [{ shapes: [[3]], f: ([a]) => o.sqrt(a), lo: 0.5, hi: 2 }],
  Reciprocal: [{ shapes: [[3]], f: ([a]) => o.reciprocal(a), lo: 0.5, hi: 2 }],
  Abs: [{ shapes: [[6]], f: ([a]) => o.abs(a) }],
  Sigmoid: [{ shapes: [[4]], f: ([a]) => o.sigmoid(a) }],
  Tanh: [{ shapes: [[4]], f: ([a]) => o.tanh(a) }],
  Max: [{ shapes: [[3, 4], [4]], f: ([a, b]) => o.max(a, b) }],
  Min: [
    {
      shapes: [
        [3, 4],
        [3, 1],
      ],
      f: ([a, b]) => o.min(a, b),
    },
  ],
  Where: [{ shapes: [[3, 4], [4]], f: ([a, b]) => o.where(o.greater(a, 0), a, b) }],
  // Cast to float32 and back: the rule is exact but the function is only float32-precise.
  Cast: [{ shapes: [[4]], f: ([a]) => o.cast(o.mul(o.cast(a, 'float32'), 3), 'float64'), tol: 1e-2 }],
  MatMul: [
    {
      shapes: [
        [2, 3, 4],
        [4, 5],
      ],
      f: ([a, b]) => o.matmul(a, b),
    },
    {
      shapes: [
        [2, 2, 3, 4],
        [2, 1, 4, 3],
      ],
      f: ([a, b]) => o.matmul(a, b),
    },
  ],
  Gemm: [
    {
      shapes: [
        [3, 4],
        [4, 2],
      ],
      f: ([a, b]) => o.gemm(a, b),
    },
    {
      shapes: [
        [4, 3],
        [2, 4],
      ],
      f: ([a, b]) => o.gemm(a, b, 1, 1),
    },
    {
      shapes: [
        [3, 4],
        [2, 4],
      ],
      f: ([a, b]) => o.gemm(a, b, 0, 1),
    },
    {
      shapes: [
        [4, 3],
        [4, 2],
      ],
      f: ([a, b]) => o.gemm(a, b, 1, 0),
    },
  ],
  ReduceSum: [
    { shapes: [[2, 3, 4]], f: ([a]) => o.reduceSum(a, [0, 2], false) },
    { shapes: [[3, 4]], f: ([a]) => o.reduceSum(a, [-1]) },
  ],
  ReduceMean: [{ shapes: [[2, 3, 4]], f: ([a]) => o.reduceMean(a, [1]) }],
  Reshape: [{ shapes: [[2, 6]], f: ([a]) => o.reshape(a, [3, -1]) }],
  Transpose: [{ shapes: [[2, 3, 4]], f: ([a]) => o.transpose(a, [2, 0, 1]) }],
  Expand: [{ shapes: [[3, 1]], f: ([a]) => o.expand(a, [2, 3, 4]) }],
  Slice: [{ shapes: [[3, 5]], f: ([a]) => o.slice(a, 1, 1, 4) }],
  Concat: [
    {
      shapes: [
        [2, 3],
        [2, 2],
      ],
      f: ([a, b]) => o.concat([a, b], 1),
    },
  ],
  Split: [
    { shapes: [[5, 2]], f: ([a]) => o.split(a, [2, 3], 0)[1] },
    { shapes: [[4]], f: ([a]) => o.mul(...pair(o.split(a, [2, 2], 0))) },
  ],
  Gather: [{ shapes: [[5, 3]], f: ([a], g) => o.gather(a, idx(g, [4, 0, 4, 2, 4, 4], [2, 3])) }],
  GatherElements: [{ shapes: [[3, 4]], f: ([a], g) => o.gatherElements(a, idx(g, [3, 0, 0, 1, 1, 1], [3, 2]), 1) }],
  Softmax: [{ shapes: [[2, 3, 5]], f: ([a]) => o.softmax(o.mul(a, 3)) }],
  RMSNormalization: [{ shapes: [[3, 6], [6]], f: ([a, s]) => o.rmsNormalization(a, s, 1e-5) }],
  RotaryEmbedding: [], // float32 only in onnxruntime: checked against the float64-checked composite below
};

function pair(vs: Value[]): [Value, Value] {
  return [vs[0], vs[1]];
}

function weighted(out: Value, g: Graph): Value {
  const w = g.constant(rand(out.size, out.size + 11), 'float64', out.shape);
  return o.reduceSum(o.mul(out, w), [...out.shape.keys()], false);
}

for (const op of PRIMITIVE_OPS) {
  CASES[op].forEach((c, k) => {
    test(`${op} gradient matches float64 finite differences (case ${k})`, async () => {
      const inputs = c.shapes.map((shape, i) => ({
        name: `x${i}`,
        shape,
        data: rand(
          shape.reduce((a, b) => a * b, 1),
          31 * i + k + 1,
          c.lo ?? -1,
          c.hi ?? 1,
        ),
      }));
      const r = await gradCheck(inputs, (vs, g) => weighted(c.f(vs, g), g), { samples: 40 });
      assert.ok(r.maxRelError < (c.tol ?? 1e-5), `max relative error ${r.maxRelError}`);
    });
  });
}

test('embedding gradient by ScatterElements add is exact with repeated indices and 2 threads', async () => {
  const inputs = [{ name: 't', shape: [6, 4], data: rand(24, 5) }];
  const ids = [5, 5, 5, 1, 5, 0, 1, 5, 5, 5, 2, 5];
  const program = programOptions({ onehotMaxElements: 0 });
  const f = ([t]: Value[], g: Graph) => weighted(o.gather(t, idx(g, ids, [3, 4])), g);
  const r = await gradCheck(inputs, f, { samples: 24, threads: 2, program });
  assert.ok(r.maxRelError < 1e-5, `max relative error ${r.maxRelError}`);
});

test('fused softmax and RMSNorm equal their primitive composites, values and gradients', async () => {
  const pairs: [string, (x: Value, s: Value) => Value, (x: Value, s: Value) => Value][] = [
    ['softmax', (x) => o.softmax(x), (x) => composite.softmax(x)],
    ['rmsNorm', (x, s) => o.rmsNormalization(x, s, 1e-6), (x, s) => composite.rmsNorm(x, s, 1e-6)],
  ];
  for (const [name, fused, reference] of pairs) {
    const g = new G('float64');
    const [x, s] = [g.input('x', 'float64', [3, 7]), g.input('s', 'float64', [7])];
    const w = g.constant(rand(21, 9), 'float64', [3, 7]);
    const outs = [fused, reference].flatMap((f) => {
      const y = f(x, s);
      return [y, ...grad(o.reduceSum(o.mul(y, w), [0, 1], false), [x, s])];
    });
    outs.forEach((v, i) => g.output(`o${i}`, v));
    const r = await (
      await createSession(g, { threads: 1 })
    ).run({ x: tensor('float64', [3, 7], rand(21, 4, -2, 2)), s: tensor('float64', [7], rand(7, 5)) });
    for (let i = 0; i < 3; i++) {
      const [a, b] = [r[`o${i}`].data as Float64Array, r[`o${i + 3}`].data as Float64Array];
      a.forEach((v, j) => assert.ok(Math.abs(v - b[j]) < 1e-12, `${name} output ${i}[${j}]: ${v} vs ${b[j]}`));
    }
  }
});

test('an op input the parameters reach but the rule gives no gradient is refused, not dropped', () => {
  const g = new G('float32');
  const x = g.input('x', 'float32', [1, 1, 2, 4]);
  const s = g.input('s', 'float32', [3, 2]); // a rotary table computed from a parameter
  const positions = g.constant([0, 2], 'int64', [1, 2]);
  const y = o.rotaryEmbedding(x, g.constant(new Array(6).fill(1), 'float32', [3, 2]), o.mul(s, 2), positions);
  const loss = o.reduceSum(y, [0, 1, 2, 3], false);
  assert.equal(grad(loss, [x]).length, 1); // tables from constants: fine
  assert.throws(
    () => grad(loss, [s]),
    (e: unknown) => e instanceof GraphError && /RotaryEmbedding .* has no gradient for its input 2/.test(e.message),
  );
});

test('stop-gradient blocks the gradient and an unknown op names itself', () => {
  const g = new G('float64');
  const x = g.input('x', 'float64', [3]);
  const [dx] = grad(o.reduceSum(o.mul(o.stopGradient(x), x), [0], false), [x]);
  assert.equal(dx.node?.op, 'Mul'); // d/dx (sg(x)·x) = sg(x): a single Mul by the seed, no second path
  const y = g.node('Erf', [x], {}, [x])[0];
  assert.throws(
    () => grad(o.reduceSum(y, [0], false), [x]),
    (e: unknown) => e instanceof GraphError && /no gradient rule for Erf/.test(e.message),
  );
});

/**
 * Composites whose backward is written out (Graph.defineGradient), and the rotary composite,
 * against finite differences.
 */
const WRITTEN_OUT: Record<string, Case> = {
  siluFusedGrad: { shapes: [[3, 5]], f: ([a]) => composite.siluFusedGrad(o.mul(a, 3)) },
  // Tables come from positions and take no gradient: only x is checked.
  rope: {
    shapes: [
      [2, 3, 4, 6],
      [2, 1, 4, 6],
      [2, 1, 4, 6],
    ],
    f: ([x, c, s]) => composite.rope(x, c, s),
  },
  matmulTransB: {
    shapes: [
      [2, 3, 5, 4],
      [2, 3, 6, 4],
    ],
    f: ([a, b]) => composite.matmulTransB(a, b),
  },
};
for (const [name, c] of Object.entries(WRITTEN_OUT)) {
  test(`${name}: the written-out backward matches float64 finite differences`, async () => {
    const inputs = c.shapes.map((shape, i) => ({
      name: `x${i}`,
      shape,
      data: rand(
        shape.reduce((a, b) => a * b, 1),
        17 * i + 3,
      ),
      differentiate: name !== 'rope' || i === 0,
    }));
    const r = await gradCheck(inputs, (vs, g) => weighted(c.f(vs, g), g), { samples: 40 });
    assert.ok(r.maxRelError < 1e-5, `max relative error ${r.maxRelError}`);
  });
}

test('written-out SiLU and a·bᵀ equal their primitive forms, values and gradients', async () => {
  const g = new G('float64');
  const x = g.input('x', 'float64', [2, 3, 4, 6]);
  const k = g.input('k', 'float64', [2, 3, 5, 6]);
  const pairs: [(v: Value) => Value, (v: Value) => Value][] = [
    [(v) => composite.siluFusedGrad(v), (v) => composite.silu(v)],
    [(v) => composite.matmulTransB(v, k), (v) => o.matmul(v, o.transpose(k, [0, 1, 3, 2]))],
  ];
  pairs.forEach(([fused, reference], p) => {
    for (const [j, f] of [fused, reference].entries()) {
      const y = f(x);
      g.output(`y${p}_${j}`, y);
      g.output(`d${p}_${j}`, grad(weighted(y, g), [x])[0]);
    }
  });
  const r = await (
    await createSession(g, { threads: 1 })
  ).run({ x: tensor('float64', [2, 3, 4, 6], rand(144, 4, -2, 2)), k: tensor('float64', [2, 3, 5, 6], rand(180, 6)) });
  for (let p = 0; p < pairs.length; p++) {
    for (const kind of ['y', 'd']) {
      const [a, b] = [r[`${kind}${p}_0`].data as Float64Array, r[`${kind}${p}_1`].data as Float64Array];
      a.forEach((v, j) => assert.ok(Math.abs(v - b[j]) < 1e-12, `pair ${p} ${kind}[${j}]: ${v} vs ${b[j]}`));
    }
  }
});

test('the RotaryEmbedding op and its gradient rule equal the rotary composite (float32; scaled tables, any positions)', async () => {
  const [B, H, T, E, P] = [2, 3, 5, 8, 11];
  const g = new G('float32');
  const x = g.input('x', 'float32', [B, H, T, E]);
  const positions = g.constant([3, 0, 7, 10, 1, 5, 5, 2, 9, 4], 'int64', [B, T]);
  const angle = Array.from({ length: P * (E / 2) }, (_, i) => Math.floor(i / (E / 2)) * 0.3 ** (i % (E / 2)));
  const half = (f: (a: number) => number) =>
    g.constant(
      angle.map((a) => 0.7 * f(a)),
      'float32',
      [P, E / 2],
    ); // scaled like q's tables
  const full = (f: (a: number) => number) => {
    const table = g.constant(
      Array.from({ length: P * E }, (_, i) => 0.7 * f(angle[Math.floor(i / E) * (E / 2) + (i % (E / 2))])),
      'float32',
      [P, E],
    );
    return o.reshape(o.gather(table, positions), [B, 1, T, E]);
  };
  const w = g.constant(Array.from(rand(B * H * T * E, 3)), 'float32', [B, H, T, E]);
  const ys = [
    o.rotaryEmbedding(x, half(Math.cos), half(Math.sin), positions),
    composite.rope(x, full(Math.cos), full(Math.sin)),
  ];
  ys.forEach((y, j) => {
    g.output(`y${j}`, y);
    g.output(`d${j}`, grad(o.reduceSum(o.mul(y, w), [0, 1, 2, 3], false), [x])[0]);
  });
  const r = await (
    await createSession(g, { threads: 1 })
  ).run({ x: tensor('float32', [B, H, T, E], Float32Array.from(rand(B * H * T * E, 5, -2, 2))) });
  for (const kind of ['y', 'd']) {
    const [a, b] = [r[`${kind}0`].data as Float32Array, r[`${kind}1`].data as Float32Array];
    a.forEach((v, j) => assert.ok(Math.abs(v - b[j]) < 1e-5, `${kind}[${j}]: ${v} vs ${b[j]}`));
  }
});

test('a written-out backward covers its composite; the composite inner values still take gradients from elsewhere', async () => {
  // y = (x·x)·x with dy/dx written as 3x²; the inner x·x is also in the loss directly (d = 2x there).
  const inputs = [{ name: 'x', shape: [5], data: rand(5, 12) }];
  const r = await gradCheck(
    inputs,
    ([x], g) => {
      const inner = o.mul(x, x);
      const y = g.defineGradient(o.mul(inner, x), [x], (gy) => [o.mul(gy, o.mul(inner, 3))]);
      return o.add(weighted(y, g), weighted(o.mul(inner, 0.5), g));
    },
    { samples: 5 },
  );
  assert.ok(r.maxRelError < 1e-6, `max relative error ${r.maxRelError}`);
  const g = new G('float64');
  const x = g.input('x', 'float64', [3]);
  assert.throws(
    () => g.defineGradient(x, [x], (gy) => [gy]),
    (e: unknown) => e instanceof GraphError && /not computed in this graph/.test(e.message),
  );
});
