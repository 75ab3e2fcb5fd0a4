/**
 * One loss definition: the engine's graph (src/policy/programs/loss.ts) against its float64 oracle
 * (loss-oracle.ts) on seeded random inputs, for every loss kind and every aggregation the engine has: first the
 * loss graph alone (float64 and float32), then a whole train step of a tiny model, in one call and in
 * micro-batches, whose metrics must be the oracle's on the model's own log-probs, entropies and values.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Policy } from '../../../src/policy/engine/policy.ts';
import { createSession, tensor } from '../../../src/policy/engine/session.ts';
import { type FloatDType, Graph, typedArray } from '../../../src/policy/graph/graph.ts';
import { grad } from '../../../src/policy/autodiff/grad.ts';
import { parseModelConfig } from '../../../src/policy/io/config.ts';
import type { TrainBatch } from '../../../src/policy/programs/batch.ts';
import { AGGREGATION_NAMES, type LossKind, type LossSpec, LOSSES, lossDef } from '../../../src/policy/programs/loss.ts';
import { rand } from './gradcheck.ts';
import { oracleLoss, type OracleInput, type OracleResult } from './loss-oracle.ts';

/** Per kind, the variants checked under every aggregation (a new kind without variants does not compile). */
const VARIANTS: { readonly [K in LossKind]: readonly Omit<Extract<LossSpec, { kind: K }>, 'aggregation'>[] } = {
  ppo: [
    { kind: 'ppo', clipLow: 0.2, clipHigh: 0.28, dualClip: 3, entropyCoef: 0.01, kl: null },
    { kind: 'ppo', clipLow: 0.2, clipHigh: 0.2, dualClip: null, entropyCoef: 0, kl: { coef: 0.1, estimator: 'k1' } },
    { kind: 'ppo', clipLow: 0.1, clipHigh: 0.3, dualClip: 1.5, entropyCoef: 0.05, kl: { coef: 0.3, estimator: 'k3' } },
  ],
  value: [
    { kind: 'value', clip: 0.5 },
    { kind: 'value', clip: 0.05 },
  ],
  sft: [{ kind: 'sft' }],
};
const SPECS: LossSpec[] = (Object.keys(LOSSES) as LossKind[]).flatMap((kind) =>
  VARIANTS[kind].flatMap((v) => AGGREGATION_NAMES.map((aggregation) => ({ ...v, aggregation }) as LossSpec)),
);

const [B, T] = [5, 9];
/**
 * Row 3 has no trained token and row 4 one; log-ratios cross both clip bounds, and tokens 1 and 5 (trained)
 * have log-ratios +25 and −30, past the ±20 clamp.
 */
function randomInput(seed: number): OracleInput {
  const n = B * T;
  const trained = (u: number, i: number) => [1, 2, 5, 6].includes(i) || u > -0.4;
  const mask = Array.from(rand(n, seed), (u, i) => {
    const row = Math.floor(i / T);
    return row === 3 ? 0 : row === 4 ? +(i % T === 2) : +trained(u, i);
  });
  const logp = Array.from(rand(n, seed + 1, -4, -0.1));
  const old = Array.from(rand(n, seed + 2, -0.6, 0.6), (d, i) => logp[i] - d);
  [old[1], old[5]] = [logp[1] - 25, logp[5] + 30];
  const advantages = Array.from(rand(n, seed + 3, -2, 2), (a, i) => (i === 1 ? Math.abs(a) : a));
  const ref = Array.from(rand(n, seed + 4, -3, 3), (d, i) => logp[i] + d);
  [ref[2], ref[6]] = [logp[2] + 30, logp[6] - 30]; // k3 clamps both to 10
  const values = Array.from(rand(n, seed + 5));
  const inputs = {
    advantages,
    old_logprobs: old,
    ref_logprobs: ref,
    returns: Array.from(rand(n, seed + 6, -2, 2)),
    old_values: Array.from(rand(n, seed + 7), (d, i) => values[i] + d),
  };
  return { B, T, mask, logp, entropy: Array.from(rand(n, seed + 8, 0, 3)), values, inputs };
}

/** The input as the engine sees it in `dtype` (the oracle then computes in float64 from the same numbers). */
function rounded(x: OracleInput, dtype: FloatDType): OracleInput {
  const r = (a: ArrayLike<number> | undefined) => (a && dtype === 'float32' ? Array.from(Float32Array.from(a)) : a);
  const inputs = Object.fromEntries(Object.entries(x.inputs).map(([k, v]) => [k, r(v)!]));
  return { ...x, logp: r(x.logp), entropy: r(x.entropy), values: r(x.values), inputs };
}

function counts(x: OracleInput): { tokens: number; sequences: number } {
  const row = (b: number) => Array.from(x.mask).slice(b * T, (b + 1) * T);
  const perRow = Array.from({ length: x.B }, (_, b) => row(b).filter((m) => m !== 0).length);
  const sequences = perRow.filter((c) => c > 0).length;
  return {
    tokens: Math.max(
      1,
      perRow.reduce((a, c) => a + c, 0),
    ),
    sequences: Math.max(1, sequences),
  };
}

/** The loss graph alone, fed per-token statistics in place of a model. */
async function engineLoss(spec: LossSpec, x: OracleInput, dtype: FloatDType): Promise<OracleResult> {
  const g = new Graph(dtype);
  const def = lossDef(spec);
  const head = def.head === 'lm' ? ['logp', 'entropy'] : ['values'];
  const names = [...head, 'mask', ...def.inputs(spec)];
  const v = Object.fromEntries(names.map((n) => [n, g.input(n, dtype, [B, T])]));
  const norm = { tokens: g.input('token_count', dtype, []), sequences: g.input('sequence_count', dtype, []) };
  const { loss, metrics } = def.build(spec, { ...v, mask: v.mask, inputs: v, norm });
  g.output('loss', loss);
  for (const [k, m] of Object.entries(metrics)) g.output(`metric.${k}`, m);
  const data = (n: string) => (n in x.inputs ? x.inputs[n] : (x as unknown as Record<string, ArrayLike<number>>)[n]);
  const c = counts(x);
  const out = await (
    await createSession(g, { threads: 1 })
  ).run({
    ...Object.fromEntries(names.map((n) => [n, tensor(dtype, [B, T], typedArray(dtype, data(n)))])),
    token_count: tensor(dtype, [], typedArray(dtype, [c.tokens])),
    sequence_count: tensor(dtype, [], typedArray(dtype, [c.sequences])),
  });
  const scalar = (k: string) => Number(out[k].data[0]);
  const values = Object.keys(metrics).map((k) => [k, scalar(`metric.${k}`)]);
  return { loss: scalar('loss'), metrics: Object.fromEntries(values) };
}

const describe = (s: LossSpec) => JSON.stringify(s);

function assertClose(got: OracleResult, want: OracleResult, tol: number, what: string): void {
  assert.deepEqual(Object.keys(got.metrics), Object.keys(want.metrics), `${what}: metric names`);
  for (const [k, w] of [['loss', want.loss], ...Object.entries(want.metrics)] as [string, number][]) {
    const g = k === 'loss' ? got.loss : got.metrics[k];
    assert.ok(Math.abs(g - w) <= tol * Math.max(1, Math.abs(w)), `${what} ${k}: engine ${g}, oracle ${w}`);
  }
}

for (const [dtype, tol] of [
  ['float64', 1e-12],
  ['float32', 1e-5],
] as const) {
  test(`the loss graph equals the oracle in ${dtype} for every kind, variant and aggregation (3 random batches)`, async () => {
    for (const seed of [11, 12, 13]) {
      const x = rounded(randomInput(seed), dtype);
      for (const spec of SPECS) {
        assertClose(await engineLoss(spec, x, dtype), oracleLoss(spec, x), tol, `${describe(spec)} seed ${seed}`);
      }
    }
  });
}

test('k3 KL keeps a finite gradient for a token 100 nats below the reference (float32)', async () => {
  const spec = {
    kind: 'ppo',
    clipLow: 0.2,
    clipHigh: 0.2,
    dualClip: null,
    entropyCoef: 0,
    kl: { coef: 1, estimator: 'k3' },
    aggregation: 'token-mean',
  } as const;
  const g = new Graph('float32');
  const [logp, ref] = [g.input('logp', 'float32', [1, 2]), g.input('ref', 'float32', [1, 2])];
  const [zeros, one] = [g.constant([0, 0], 'float32', [1, 2]), g.constant([1], 'float32', [])];
  const { loss } = lossDef(spec).build(spec, {
    logp,
    entropy: zeros,
    mask: g.constant([1, 1], 'float32', [1, 2]),
    inputs: { advantages: zeros, old_logprobs: logp, ref_logprobs: ref },
    norm: { tokens: one, sequences: one },
  });
  g.output('grad', grad(loss, [logp])[0]);
  const feed = (xs: number[]) => tensor('float32', [1, 2], Float32Array.from(xs));
  const out = await (await createSession(g, { threads: 1 })).run({ logp: feed([-101, -1.5]), ref: feed([-1, -1]) });
  const d = Array.from(out.grad.data as Float32Array);
  assert.ok(d.every(Number.isFinite), `gradient ${d}`);
  assert.equal(d[0], 0); // clamped at 10: no gradient, and no NaN
});

// ---- A whole train step of a tiny model, one call or one row per call ----

const config = parseModelConfig({
  model_type: 'qwen2',
  vocab_size: 23,
  hidden_size: 16,
  intermediate_size: 24,
  num_hidden_layers: 1,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  tie_word_embeddings: true,
});
const LENGTHS = [9, 6, 4, 7]; // right-padded rows; row 2 has no trained token

function trainBatch(): TrainBatch & Required<Pick<TrainBatch, 'advantages' | 'returns'>> {
  const [rows, T] = [LENGTHS.length, 9];
  const at = (f: (b: number, t: number) => number) =>
    Float32Array.from({ length: rows * T }, (_, i) => f(Math.floor(i / T), i % T));
  const u = rand(rows * T, 31);
  return {
    batch: rows,
    seqLen: T,
    tokens: Int32Array.from({ length: rows * T }, (_, i) => (i * 7 + 3) % 23),
    attentionMask: at((b, t) => +(t < LENGTHS[b])),
    lossMask: at((b, t) => +(b !== 2 && t >= 2 && t < LENGTHS[b])),
    advantages: at((b, t) => u[b * T + t] * 2),
    returns: at((b, t) => u[(b * T + t + 5) % u.length]),
  };
}

/** The oracle's view of a train batch: token 0 of a row is never trained (nothing predicts it). */
type ModelStats = { logp?: Float32Array; entropy?: Float32Array; values?: Float32Array };

function oracleView(b: TrainBatch, stats: ModelStats): OracleInput {
  const mask = Array.from(b.lossMask, (m, i) => (i % b.seqLen === 0 ? 0 : m));
  const inputs: Record<string, ArrayLike<number>> = {
    advantages: b.advantages!,
    old_logprobs: b.oldLogprobs!,
    ref_logprobs: b.refLogprobs!,
    returns: b.returns!,
    old_values: b.oldValues!,
  };
  return { B: b.batch, T: b.seqLen, mask, ...stats, inputs };
}

async function trainStepMetrics(policy: Policy, spec: LossSpec): Promise<[OracleResult, OracleResult]> {
  const b = trainBatch();
  const s = await policy.score(b);
  const shift = (xs: Float32Array, by: number) => xs.map((x, i) => x + by * Math.sin(i));
  const batch = s.values
    ? { ...b, oldValues: shift(s.values, 0.4) }
    : { ...b, oldLogprobs: shift(s.logprobs!, 0.3), refLogprobs: shift(s.logprobs!, 1) };
  const m = await policy.trainStep(batch, { loss: spec, lr: 1e-3 });
  const { loss, grad_norm: _g, skipped: _s, tokens: _t, ...metrics } = m;
  const want = oracleLoss(spec, oracleView(batch, { logp: s.logprobs, entropy: s.entropy, values: s.values }));
  return [{ loss, metrics }, want];
}

/** Every kind and aggregation through one actor and one critic with this attention budget. */
async function checkTrainSteps(attentionBudget: number): Promise<void> {
  const options = { config, threads: 1, seqMultiple: 8, attentionBudget, inPlaceOptimizer: false };
  const models = {
    actor: new Policy({ ...options, seed: 5 }),
    critic: new Policy({ ...options, role: 'critic', seed: 6 }),
  };
  for (const kind of Object.keys(LOSSES) as LossKind[]) {
    for (const aggregation of AGGREGATION_NAMES) {
      const spec = { ...VARIANTS[kind].at(-1)!, aggregation } as LossSpec;
      const [got, want] = await trainStepMetrics(kind === 'value' ? models.critic : models.actor, spec);
      assertClose(got, want, 1e-5, `budget ${attentionBudget} ${describe(spec)}`);
    }
  }
  await Promise.all([models.actor.close(), models.critic.close()]);
}

test("a train step reports the oracle's loss and metrics on the model's own statistics, in one call", async () => {
  await checkTrainSteps(1 << 30);
});

test("a train step reports the oracle's loss and metrics in micro-batches of one row", async () => {
  await checkTrainSteps(1);
});
