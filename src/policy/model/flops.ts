/**
 * Floating-point work of the model, for benchmarks: multiply-adds of every matrix product, counted
 * as 2 FLOPs each. Attention scores and weighted sums are counted over all T keys (the graph
 * computes the full T×T product and masks it), so the count is what the hardware actually does.
 */
import type { ModelConfig } from '../io/config.ts';

/** Forward FLOPs per token for sequences of length T (projections, MLP, attention, lm head). */
export function forwardFlopsPerToken(cfg: ModelConfig, T: number): number {
  const {
    hiddenSize: D,
    numHeads: H,
    numKvHeads: K,
    headDim: E,
    intermediateSize: I,
    vocabSize: V,
    numLayers: L,
  } = cfg;
  const projections = D * (H + 2 * K) * E + H * E * D; // q, k, v, o
  const mlp = 3 * D * I; // gate, up, down
  const attention = 2 * H * E * T; // scores and weighted sum, per query
  return 2 * (L * (projections + mlp + attention) + D * V);
}

/** train_step ≈ forward + backward (twice the forward's products: one per operand's gradient). */
export function trainFlopsPerToken(cfg: ModelConfig, T: number): number {
  return 3 * forwardFlopsPerToken(cfg, T);
}
