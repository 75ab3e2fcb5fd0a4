import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createSession, floatTensor, type OrtTensor } from '../../../src/policy/engine/session.ts';
import { Graph } from '../../../src/policy/graph/graph.ts';
import { type AdamWSpec, adamw } from '../../../src/policy/programs/adamw.ts';
import { rand } from './gradcheck.ts';

const SPEC: AdamWSpec = { beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.1, maxGradNorm: 1 };
const SIZES = { matrices: 7, vectors: 3 } as const;
type G = 'matrices' | 'vectors';
const GROUPS: G[] = ['matrices', 'vectors'];
type State = Record<'p' | 'm' | 'v', Record<G, number[]>>;

async function optimizerSession() {
  const g = new Graph('float64');
  const inputs = (prefix: string) =>
    Object.fromEntries(GROUPS.map((n) => [n, g.input(`${prefix}_${n}`, 'float64', [SIZES[n]])])) as never;
  const state = { params: inputs('p'), m: inputs('m'), v: inputs('v') };
  const out = adamw(state, inputs('g'), g.input('lr', 'float64', []), g.input('step', 'float64', []), SPEC);
  for (const n of GROUPS)
    for (const [k, v] of [
      ['p', out.params[n]],
      ['m', out.m[n]],
      ['v', out.v[n]],
    ] as const)
      g.output(`new_${k}_${n}`, v);
  g.output('grad_norm', out.gradNorm);
  g.output('skipped', out.skipped);
  return createSession(g, { threads: 1 });
}

/** torch.optim.AdamW + clip_grad_norm_, written out plainly. */
function reference(s: State, grads: Record<G, number[]>, lr: number, t: number): State {
  const norm = Math.sqrt(GROUPS.reduce((a, n) => a + grads[n].reduce((b, x) => b + x * x, 0), 0));
  const coef = Math.min(1, SPEC.maxGradNorm! / (norm + 1e-6));
  const next: State = { p: { ...s.p }, m: { ...s.m }, v: { ...s.v } };
  for (const n of GROUPS) {
    const g = grads[n].map((x) => x * coef);
    next.m[n] = s.m[n].map((m, i) => SPEC.beta1 * m + (1 - SPEC.beta1) * g[i]);
    next.v[n] = s.v[n].map((v, i) => SPEC.beta2 * v + (1 - SPEC.beta2) * g[i] * g[i]);
    const wd = n === 'matrices' ? SPEC.weightDecay : 0;
    next.p[n] = s.p[n].map((p, i) => {
      const mh = next.m[n][i] / (1 - SPEC.beta1 ** t);
      const vh = next.v[n][i] / (1 - SPEC.beta2 ** t);
      return p * (1 - lr * wd) - (lr * mh) / (Math.sqrt(vh) + SPEC.eps);
    });
  }
  return next;
}

async function step(
  session: Awaited<ReturnType<typeof optimizerSession>>,
  s: State,
  grads: Record<G, number[]>,
  lr: number,
  t: number,
) {
  const feeds: Record<string, OrtTensor> = {
    lr: floatTensor(Float64Array.of(lr), []),
    step: floatTensor(Float64Array.of(t), []),
  };
  for (const n of GROUPS) {
    for (const [k, v] of [
      ['p', s.p[n]],
      ['m', s.m[n]],
      ['v', s.v[n]],
      ['g', grads[n]],
    ] as const)
      feeds[`${k}_${n}`] = floatTensor(Float64Array.from(v), [v.length]);
  }
  const out = await session.run(feeds);
  const read = (k: string) =>
    Object.fromEntries(GROUPS.map((n) => [n, Array.from(out[`new_${k}_${n}`].data as Float64Array)])) as Record<
      G,
      number[]
    >;
  return { state: { p: read('p'), m: read('m'), v: read('v') }, skipped: (out.skipped.data as Float64Array)[0] };
}

const grads = (seed: number, scale: number) =>
  Object.fromEntries(GROUPS.map((n) => [n, Array.from(rand(SIZES[n], seed + n.length), (x) => x * scale)])) as Record<
    G,
    number[]
  >;

test('in-graph AdamW with clipping equals a plain TypeScript AdamW for five steps', async () => {
  const session = await optimizerSession();
  let ours: State = { p: grads(1, 1), m: grads(0, 0), v: grads(0, 0) };
  let ref = ours;
  for (let t = 1; t <= 5; t++) {
    const g = grads(10 + t, t === 3 ? 5 : 0.2); // step 3's gradient is clipped
    ours = (await step(session, ours, g, 0.01, t)).state;
    ref = reference(ref, g, 0.01, t);
  }
  for (const k of ['p', 'm', 'v'] as const)
    for (const n of GROUPS)
      ours[k][n].forEach((x, i) => assert.ok(Math.abs(x - ref[k][n][i]) < 1e-12, `${k}.${n}[${i}]`));
});

test('a non-finite gradient sets skipped = 1 (the runner then keeps its buffers); a zero lr leaves params unchanged', async () => {
  const session = await optimizerSession();
  const v = grads(3, 0.01);
  const s: State = {
    p: grads(1, 1),
    m: grads(2, 0.1),
    v: { matrices: v.matrices.map(Math.abs), vectors: v.vectors.map(Math.abs) },
  };
  const bad = grads(4, 1);
  bad.vectors[1] = Number.NaN;
  assert.equal((await step(session, s, bad, 0.01, 2)).skipped, 1);
  bad.vectors[1] = Number.POSITIVE_INFINITY;
  assert.equal((await step(session, s, bad, 0.01, 2)).skipped, 1);
  const still = await step(session, s, grads(5, 1), 0, 2);
  assert.equal(still.skipped, 0);
  assert.deepEqual(still.state.p, s.p);
  const ref = reference(s, grads(5, 1), 0, 2);
  for (const k of ['m', 'v'] as const)
    for (const n of GROUPS) still.state[k][n].forEach((x, i) => assert.ok(Math.abs(x - ref[k][n][i]) < 1e-12));
});
