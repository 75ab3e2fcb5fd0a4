/**
 * The TypeScript side of sampling one token per row at temperature 1, side by side in one process: TokenSampler over
 * the logits (an exp per logit, in float64) and drawFromWeights over the program's weights exp(logit − max) and the
 * logits (a max, two sums and a scan: no exp). Rows of SmolLM2's vocabulary (49,152); milliseconds per row, three
 * rounds, with the load average.
 *
 *   node --import tsx scripts/bench-sampling.ts [rows] [vocab]
 */
import { loadavg } from 'node:os';
import { SamplingRng } from '../src/policy/sampling/rng.ts';
import { TokenSampler, drawFromWeights } from '../src/policy/sampling/sampler.ts';

const [B = 32, V = 49152] = process.argv.slice(2).map(Number);
const logits = new Float32Array(B * V).map((_, i) => Math.sin(i * 0.37) * 8);
const weights = new Float32Array(B * V);
for (let b = 0; b < B; b++) {
  const row = logits.subarray(b * V, (b + 1) * V);
  const max = row.reduce((m, x) => Math.max(m, x), -Infinity);
  row.forEach((x, i) => (weights[b * V + i] = Math.exp(x - max)));
}
const sampler = new TokenSampler(V);
const rngs = Array.from({ length: B }, (_, b) => SamplingRng.fromSeed(1, b));
const [tokens, logProbs, entropies] = [new Int32Array(B), new Float32Array(B), new Float32Array(B)];
const msPerRow = (fn: () => void, calls = 10) => {
  const t0 = performance.now();
  for (let i = 0; i < calls; i++) fn();
  return Math.round(((performance.now() - t0) / calls / B) * 1000) / 1000;
};
for (let round = 0; round < 3; round++) {
  const load1 = Math.round(loadavg()[0] * 100) / 100;
  const tokenSampler = msPerRow(() =>
    sampler.sampleBatch(logits, { temperature: 1 }, rngs, tokens, logProbs, entropies),
  );
  const fromWeights = msPerRow(() => {
    for (let b = 0; b < B; b++) drawFromWeights(weights, logits, b * V, V, rngs[b]!);
  });
  console.log(JSON.stringify({ bench: 'sampling', rows: B, vocab: V, tokenSampler, fromWeights, load1 }));
}
