/**
 * Causal attention in query blocks (ProgramOptions.causalBlockTokens, model/transformer.ts attendCausal) against the
 * whole [T, T] square, side by side in one process: a LoRA train step (forward and backward) and a scoring pass of
 * one row of T tokens through a model with SmolLM2-135M's attention shape (576 wide, 9 query and 3 key/value heads
 * of 64, its MLP) but 4 layers and a 64-token vocabulary, so attention is a large share of the step. The sides
 * alternate for `rounds` rounds after one that compiles. One JSON line: each side's milliseconds per round, the
 * median ratio blocks / whole, the load average.
 *
 *   node --import tsx scripts/bench-causal-blocks.ts [T] [rounds] [blockTokens] [threads]
 */
import os from 'node:os';
import { Policy } from '../src/policy/engine/policy.ts';
import { parseModelConfig } from '../src/policy/io/config.ts';
import type { LoraSpec } from '../src/policy/model/lora.ts';
import { STARPO_S_PPO } from '../src/policy/programs/loss.ts';
import { median } from '../src/rl/stats.ts';

const [T, rounds, blockTokens, threads] = [736, 8, 128, 2].map((d, i) => Number(process.argv[2 + i] ?? d));
if (![T, rounds, blockTokens, threads].every((x) => Number.isInteger(x) && x > 0)) {
  console.error('usage: bench-causal-blocks.ts [T] [rounds] [blockTokens] [threads] (positive integers)');
  process.exit(2);
}
const config = parseModelConfig({
  model_type: 'llama',
  vocab_size: 64,
  hidden_size: 576,
  intermediate_size: 1536,
  num_hidden_layers: 4,
  num_attention_heads: 9,
  num_key_value_heads: 3,
  max_position_embeddings: Math.max(2048, T),
  tie_word_embeddings: true,
});
const lora: LoraSpec = { rank: 16, alpha: 32, dropout: 0, targets: ['q', 'k', 'v', 'o', 'gate', 'up', 'down'] };
const make = (causalBlockTokens: number) =>
  new Policy({ config, seed: 3, threads, lora, program: { causalBlockTokens }, packPrefixes: false });
const sides = { whole: make(Infinity), blocks: make(blockTokens) };
const batch = {
  batch: 1,
  seqLen: T,
  tokens: Int32Array.from({ length: T }, (_, i) => (i * 7) % 64),
  attentionMask: new Float32Array(T).fill(1),
  lossMask: Float32Array.from({ length: T }, (_, i) => (i % 5 === 0 ? 1 : 0)),
  advantages: new Float32Array(T).fill(0.5),
  oldLogprobs: new Float32Array(T).fill(-4),
};
const opts = { loss: STARPO_S_PPO, lr: 0 };
const ms: Record<keyof typeof sides, number[]> = { whole: [], blocks: [] };
for (const p of Object.values(sides)) {
  await p.trainStep(batch, opts); // compiles
  await p.score(batch);
}
for (let r = 0; r < rounds; r++)
  for (const [name, p] of Object.entries(sides) as [keyof typeof sides, Policy][]) {
    const t0 = performance.now();
    await p.trainStep(batch, opts);
    await p.score(batch);
    ms[name].push(Math.round(performance.now() - t0));
  }
console.log(
  JSON.stringify({
    bench: 'causal-blocks',
    T,
    blockTokens,
    threads,
    ms,
    medianRatio: Math.round((median(ms.blocks) / median(ms.whole)) * 1000) / 1000,
    load: os.loadavg().map((x) => Math.round(x * 100) / 100),
  }),
);
for (const p of Object.values(sides)) await p.close();
