/**
 * Float64 gradient checking: the autodiff gradient of a scalar loss against central finite
 * differences on sampled coordinates of each input. Shared by the rule and model tests.
 */
import { grad } from '../../../src/policy/autodiff/grad.ts';
import { Graph, type Shape, type Value } from '../../../src/policy/graph/graph.ts';
import type { ProgramOptions } from '../../../src/policy/graph/program-options.ts';
import { createSession, tensor, type OrtTensor } from '../../../src/policy/engine/session.ts';
import { type ModelConfig, parseModelConfig } from '../../../src/policy/io/config.ts';

/** A tiny random-init model for the gradient and LoRA tests: Qwen2, vocabulary 11, untied, unless `overrides` say. */
export function tinyModelConfig(overrides: Record<string, unknown> = {}): ModelConfig {
  return parseModelConfig({
    model_type: 'qwen2',
    vocab_size: 11,
    hidden_size: 16,
    intermediate_size: 24,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    initializer_range: 0.3,
    tie_word_embeddings: false,
    ...overrides,
  });
}

/** The model shapes the gradient tests check: Qwen2 (untied) and Qwen3 (q/k norms, head_dim 6, tied). */
export const TINY_MODELS = {
  qwen2: tinyModelConfig(),
  qwen3: tinyModelConfig({ model_type: 'qwen3', head_dim: 6, tie_word_embeddings: true }),
};

export interface CheckInput {
  readonly name: string;
  readonly shape: Shape;
  readonly data: Float64Array;
  /** false for inputs that are only data (e.g. indices passed as floats are not allowed: use `extra`). */
  readonly differentiate?: boolean;
}

export interface CheckResult {
  readonly maxRelError: number;
  readonly checked: number;
}

/** A deterministic uniform(lo, hi) Float64Array. */
export function rand(n: number, seed: number, lo = -1, hi = 1): Float64Array {
  let s = seed >>> 0 || 1;
  return Float64Array.from({ length: n }, () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return lo + ((s >>> 0) / 2 ** 32) * (hi - lo);
  });
}

/**
 * Builds `loss = f(inputs)` in float64, differentiates it w.r.t. the inputs, and compares with
 * central differences at up to `samples` coordinates per input. `extra` feeds non-float inputs.
 */
export async function gradCheck(
  inputs: readonly CheckInput[],
  f: (vs: Value[], g: Graph) => Value,
  opts: {
    samples?: number;
    h?: number;
    extra?: Record<string, OrtTensor>;
    threads?: number;
    program?: ProgramOptions;
  } = {},
): Promise<CheckResult> {
  const g = new Graph('float64', opts.program);
  const vs = inputs.map((i) => g.input(i.name, 'float64', i.shape));
  const loss = f(vs, g);
  const diffable = inputs.map((i, k) => [i, vs[k]] as const).filter(([i]) => i.differentiate !== false);
  const grads = grad(
    loss,
    diffable.map(([, v]) => v),
  );
  g.output('loss', loss);
  grads.forEach((gv, k) => g.output(`grad_${diffable[k][0].name}`, gv));
  const session = await createSession(g, { threads: opts.threads ?? 1 });
  const feeds = (over?: [string, Float64Array]): Record<string, OrtTensor> => ({
    ...opts.extra,
    ...Object.fromEntries(
      inputs.map((i) => [i.name, tensor('float64', i.shape, over?.[0] === i.name ? over[1] : i.data)]),
    ),
  });
  const lossAt = async (over: [string, Float64Array]): Promise<number> =>
    (await session.run(feeds(over))).loss.data[0] as number;
  const base = await session.run(feeds());
  const h = opts.h ?? 1e-5;
  let maxRelError = 0;
  let checked = 0;
  for (const [inp] of diffable) {
    const analytic = base[`grad_${inp.name}`].data as Float64Array;
    const n = inp.data.length;
    const picks =
      n <= (opts.samples ?? 12) ? [...Array(n).keys()] : pickIndices(n, opts.samples ?? 12, inp.name.length);
    for (const j of picks) {
      const plus = Float64Array.from(inp.data);
      const minus = Float64Array.from(inp.data);
      plus[j] += h;
      minus[j] -= h;
      const numeric = ((await lossAt([inp.name, plus])) - (await lossAt([inp.name, minus]))) / (2 * h);
      const err = Math.abs(numeric - analytic[j]) / Math.max(1e-4, Math.abs(numeric), Math.abs(analytic[j]));
      maxRelError = Math.max(maxRelError, err);
      checked++;
    }
  }
  return { maxRelError, checked };
}

function pickIndices(n: number, k: number, seed: number): number[] {
  const r = rand(k, seed + 7, 0, n);
  return [...new Set(Array.from(r, Math.floor))];
}
