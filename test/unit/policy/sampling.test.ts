import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../../src/errors.ts';
import { SamplingRng } from '../../../src/policy/sampling/rng.ts';
import {
  TokenSampler,
  drawFromWeights,
  sampleToken,
  tokenLogProb,
  type SamplingOptions,
} from '../../../src/policy/sampling/sampler.ts';

const LOGITS = new Float32Array([0.5, 2, -1, 1.5, 0, -3]);

function softmax(logits: ArrayLike<number>, t: number): number[] {
  const e = Array.from(logits, (x) => Math.exp(x / t));
  const z = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / z);
}

function frequencies(logits: Float32Array, options: SamplingOptions, draws: number, seed = 1): number[] {
  const sampler = new TokenSampler(logits.length);
  const rng = SamplingRng.fromSeed(seed);
  const counts = new Array(logits.length).fill(0);
  for (let i = 0; i < draws; i++) counts[sampler.sample(logits, options, rng).token]++;
  return counts.map((c) => c / draws);
}

function assertClose(actual: number[], expected: number[], tol: number): void {
  actual.forEach((a, i) => assert.ok(Math.abs(a - expected[i]) <= tol, `token ${i}: ${a} vs ${expected[i]}`));
}

test('greedy picks the argmax and reports its untempered log-prob', () => {
  const r = sampleToken(LOGITS, { temperature: 0 }, SamplingRng.fromSeed(1));
  assert.equal(r.token, 1);
  assert.ok(Math.abs(r.logProb - Math.log(softmax(LOGITS, 1)[1])) < 1e-12);
});

test('top-k = 1 is the argmax; log-prob is of the untruncated tempered distribution', () => {
  const r = sampleToken(LOGITS, { temperature: 0.5, topK: 1 }, SamplingRng.fromSeed(1));
  assert.equal(r.token, 1);
  assert.ok(Math.abs(r.logProb - Math.log(softmax(LOGITS, 0.5)[1])) < 1e-12);
  assert.ok(Math.abs(r.logProb - tokenLogProb(LOGITS, 1, 0.5)) < 1e-12);
});

test('empirical frequencies match softmax(logits / T)', () => {
  assertClose(frequencies(LOGITS, { temperature: 0.7 }, 50_000), softmax(LOGITS, 0.7), 0.01);
});

test('top-k renormalises over the k most likely tokens', () => {
  const p = softmax(LOGITS, 1);
  const kept = p[1] + p[3];
  assertClose(frequencies(LOGITS, { temperature: 1, topK: 2 }, 20_000), [0, p[1] / kept, 0, p[3] / kept, 0, 0], 0.01);
});

const NUCLEUS = new Float32Array([0.05, 0.5, 0.15, 0.3].map(Math.log)); // probabilities 0.05, 0.5, 0.15, 0.3

test('top-p keeps the smallest set of most likely tokens reaching p', () => {
  assertClose(frequencies(NUCLEUS, { temperature: 1, topP: 0.75 }, 20_000), [0, 0.625, 0, 0.375], 0.01);
  assertClose(
    frequencies(NUCLEUS, { temperature: 1, topP: 0.9 }, 20_000),
    [0, 0.5 / 0.95, 0.15 / 0.95, 0.3 / 0.95],
    0.01,
  );
  assertClose(frequencies(NUCLEUS, { temperature: 1, topP: 0.4 }, 1000), [0, 1, 0, 0], 0);
});

test('top-p applies to the renormalised top-k set', () => {
  // top-3 mass 0.95; p = 0.5 of it is 0.475 < 0.5, so only the best token survives.
  assertClose(frequencies(NUCLEUS, { temperature: 1, topK: 3, topP: 0.5 }, 1000), [0, 1, 0, 0], 0);
  assertClose(frequencies(NUCLEUS, { temperature: 1, topK: 3, topP: 0.75 }, 20_000), [0, 0.625, 0, 0.375], 0.01);
});

test('the top-p nucleus of a large vocabulary matches a sort-based reference', () => {
  const rng = SamplingRng.fromSeed(9);
  const logits = Float32Array.from({ length: 1000 }, () => rng.next() * 8);
  const p = softmax(logits, 0.8);
  const sorted = [...p.keys()].sort((a, b) => p[b] - p[a]);
  const nucleus = new Set<number>();
  let mass = 0;
  for (const token of sorted) {
    if (mass >= 0.6) break;
    nucleus.add(token);
    mass += p[token];
  }
  const freq = frequencies(logits, { temperature: 0.8, topP: 0.6 }, 20_000);
  freq.forEach((f, token) => assert.ok(f === 0 || nucleus.has(token), `token ${token} is outside the nucleus`));
  assert.equal(freq.filter((f) => f > 0).length, nucleus.size);
});

test('the same seed gives the same tokens', () => {
  const draw = (seed: number) => {
    const rng = SamplingRng.fromSeed(seed);
    return Array.from({ length: 20 }, () => sampleToken(LOGITS, { temperature: 1, topP: 0.9 }, rng).token);
  };
  assert.deepEqual(draw(5), draw(5));
  assert.notDeepEqual(draw(5), draw(6));
});

test('masked (-Infinity) tokens are never drawn; NaN logits are refused', () => {
  const masked = new Float32Array([-Infinity, 0, -Infinity, 0]);
  assertClose(frequencies(masked, { temperature: 1 }, 2000), [0, 0.5, 0, 0.5], 0.05);
  assertClose(frequencies(masked, { temperature: 1, topP: 0.99 }, 2000), [0, 0.5, 0, 0.5], 0.05);
  assert.throws(() => sampleToken(new Float32Array([0, NaN]), { temperature: 1 }, SamplingRng.fromSeed(1)), /NaN/);
});

test('ties go to the lower token id', () => {
  assert.equal(
    sampleToken(new Float32Array([1, 3, 3, 3]), { temperature: 1, topK: 1 }, SamplingRng.fromSeed(1)).token,
    1,
  );
  assert.equal(sampleToken(new Float32Array([1, 3, 3, 3]), { temperature: 0 }, SamplingRng.fromSeed(1)).token, 1);
});

test('bad options name the field', () => {
  const rng = SamplingRng.fromSeed(1);
  for (const [options, field] of [
    [{ temperature: -1 }, 'temperature'],
    [{ temperature: 1, topP: 0 }, 'top_p'],
    [{ temperature: 1, topK: 1.5 }, 'top_k'],
  ] as const) {
    assert.throws(
      () => sampleToken(LOGITS, options, rng),
      (e: unknown) => e instanceof ConfigError && e.field === field,
    );
  }
});

test('batched sampling equals row-by-row sampling with the same generators', () => {
  const batch = new Float32Array([...LOGITS, ...LOGITS.map((x) => -x), ...NUCLEUS, 0, 0]);
  const sampler = new TokenSampler(6);
  const options = { temperature: 0.9, topK: 4, topP: 0.95 };
  const tokens = new Int32Array(3);
  const logProbs = new Float32Array(3);
  sampler.sampleBatch(
    batch,
    options,
    [1, 2, 3].map((s) => SamplingRng.fromSeed(s)),
    tokens,
    logProbs,
  );
  for (let b = 0; b < 3; b++) {
    const r = sampler.sample(batch, options, SamplingRng.fromSeed(b + 1), b * 6);
    assert.deepEqual([tokens[b], logProbs[b]], [r.token, Math.fround(r.logProb)]);
  }
  assert.throws(
    () => sampler.sampleBatch(batch, options, SamplingRng.fromSeed(1), new Int32Array(2), new Float32Array(2)),
    /do not agree/,
  );
});

test('the entropy reported is that of softmax(logits / T), the distribution sampled from (T = 1 when greedy)', () => {
  const rng = SamplingRng.fromSeed(1, 0);
  const logits = Float32Array.of(0, Math.log(3), -Infinity); // p = 1/4, 3/4, 0
  const h = -(0.25 * Math.log(0.25) + 0.75 * Math.log(0.75));
  assert.ok(Math.abs(sampleToken(logits, { temperature: 1 }, rng).entropy - h) < 1e-7);
  assert.ok(Math.abs(sampleToken(logits, { temperature: 0 }, rng).entropy - h) < 1e-7);
  assert.ok(Math.abs(sampleToken(Float32Array.of(0, 2 * Math.log(3)), { temperature: 2 }, rng).entropy - h) < 1e-7);
});

/** exp(logit − max) in float32, as the programs' `sample_weights`, for `rows` copies of LOGITS. */
function weightsOf(logits: Float32Array, rows = 1): Float32Array {
  const max = Math.max(...logits);
  const row = Float32Array.from(logits, (x) => Math.exp(x - max));
  const out = new Float32Array(rows * row.length);
  for (let r = 0; r < rows; r++) out.set(row, r * row.length);
  return out;
}

test('drawing from the in-program weights: frequencies of softmax(logits), log-probs of w / Σw, one draw a row', () => {
  const V = LOGITS.length;
  const w = weightsOf(LOGITS, 2);
  const rows2 = Float32Array.from([...LOGITS, ...LOGITS]);
  const reference = new TokenSampler(V).sample(LOGITS, { temperature: 1 }, SamplingRng.fromSeed(1));
  const rng = SamplingRng.fromSeed(5);
  const counts = new Array(V).fill(0);
  for (let i = 0; i < 40_000; i++) {
    const { token, logProb, entropy } = drawFromWeights(w, rows2, V, V, rng); // the second row
    counts[token]++;
    assert.ok(Math.abs(logProb - tokenLogProb(LOGITS, token, 1)) < 1e-6, `${logProb} for token ${token}`);
    assert.ok(Math.abs(entropy - reference.entropy) < 1e-6, `${entropy} vs ${reference.entropy}`);
  }
  assertClose(
    counts.map((c) => c / 40_000),
    softmax(LOGITS, 1),
    0.01,
  );
  // One draw from the row's generator, as TokenSampler's plain sampling: the same generator state after either.
  const [a, b] = [SamplingRng.fromSeed(9), SamplingRng.fromSeed(9)];
  drawFromWeights(w, rows2, 0, V, a);
  new TokenSampler(V).sample(LOGITS, { temperature: 1 }, b);
  assert.equal(a.next(), b.next());
});

test('drawing from weights never picks a weight of 0 and refuses weights of NaN logits', () => {
  const w = new Float32Array([0, 1, 0, 0.5, 0]);
  const logits = new Float32Array([-Infinity, 0, -Infinity, Math.log(0.5), -Infinity]);
  const rng = SamplingRng.fromSeed(2);
  for (let i = 0; i < 2000; i++) assert.ok([1, 3].includes(drawFromWeights(w, logits, 0, 5, rng).token));
  const top = { next: () => 0.999999999999 } as SamplingRng; // u at the very top: the last drawable token
  const drawn = drawFromWeights(w, logits, 0, 5, top);
  assert.equal(drawn.token, 3);
  assert.ok(Number.isFinite(drawn.entropy), 'masked tokens add nothing to the entropy');
  const nan = new Float32Array([1, NaN]);
  assert.throws(() => drawFromWeights(nan, nan, 0, 2, rng), /sampling weights sum to NaN/);
});
