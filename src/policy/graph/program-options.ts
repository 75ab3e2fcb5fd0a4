/**
 * How a program's graph is built, beside its shapes: which fused kernels the model uses and how an
 * embedding's gradient is formed. Every graph carries the options it was built with (Graph.options),
 * the model code and the gradient rules read them there, and the program cache keys on them
 * (engine/programs.ts), so two policies with different options in one process never share a program.
 */
export interface KernelOptions {
  /** Fused onnxruntime Softmax (with its own gradient rule) instead of the composite. */
  readonly softmax: boolean;
  /** Fused RMSNormalization instead of the composite. */
  readonly rmsNorm: boolean;
  /** SiLU with a written-out backward (4 passes over the activation instead of 6). */
  readonly silu: boolean;
  /** The ONNX RotaryEmbedding op (float32 graphs only) instead of the composite. */
  readonly rope: boolean;
  /** Attention weights and SwiGLU's σ(gate), silu(gate) recomputed in the backward instead of kept. */
  readonly recompute: boolean;
}

export interface ProgramOptions {
  /** Measured choices: model/transformer.ts says why each is on by default. */
  readonly kernels: KernelOptions;
  /**
   * An embedding's gradient is a one-hot Gemm while tokens · vocabulary ≤ this, else a scatter
   * (autodiff/rules.ts says why; Infinity: always the Gemm, 0: always the scatter).
   */
  readonly onehotMaxElements: number;
  /**
   * The LM head, log-softmax and entropy run over row chunks of at most this many logits (rows · vocabulary), each
   * chunk's backward recomputing its logits (model/composite.ts headStats): a program never holds more than one
   * chunk's [rows, V] tensors. Infinity (the default): one chunk, logits kept for the backward. Off until it
   * measures better: at SmolLM2's 4 × 512, 2^24 saved no memory and no time (engine/README.md).
   */
  readonly headChunkElements: number;
  /**
   * A whole sequence's causal attention (training, scoring) runs in query blocks of at least this many tokens, each
   * against the keys up to its end (model/transformer.ts attendCausal); Infinity: one block, the whole square.
   */
  readonly causalBlockTokens: number;
}

export const DEFAULT_PROGRAM_OPTIONS: ProgramOptions = Object.freeze({
  kernels: Object.freeze({ softmax: true, rmsNorm: true, silu: true, rope: true, recompute: true }),
  onehotMaxElements: 1 << 19,
  headChunkElements: Infinity,
  causalBlockTokens: 128,
});

/** Options to build with: the defaults, with `overrides` (a kernel at a time) on top. */
export function programOptions(overrides: ProgramOverrides = {}): ProgramOptions {
  return Object.freeze({
    kernels: Object.freeze({ ...DEFAULT_PROGRAM_OPTIONS.kernels, ...overrides.kernels }),
    onehotMaxElements: overrides.onehotMaxElements ?? DEFAULT_PROGRAM_OPTIONS.onehotMaxElements,
    headChunkElements: overrides.headChunkElements ?? DEFAULT_PROGRAM_OPTIONS.headChunkElements,
    causalBlockTokens: overrides.causalBlockTokens ?? DEFAULT_PROGRAM_OPTIONS.causalBlockTokens,
  });
}

export interface ProgramOverrides {
  readonly kernels?: Partial<KernelOptions>;
  readonly onehotMaxElements?: number;
  readonly headChunkElements?: number;
  readonly causalBlockTokens?: number;
}

/**
 * The options as a cache-key part: every field, keys sorted so the order they were written in does not
 * matter, and non-finite numbers spelled out (JSON would write Infinity as null, the same as NaN).
 */
export function programOptionsKey(o: ProgramOptions): string {
  return JSON.stringify(o, (_key, value: unknown) => {
    if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(Object.entries(value).sort(([a], [b]) => a.localeCompare(b)));
  });
}
