/**
 * Llama 3 rope scaling in GGUF: llama.cpp's converter stores it as a `rope_freqs` tensor (per rotary pair, the
 * divisor of its frequency) and no parameters. Export computes the tensor from the config; import recovers the
 * config by finding the parameter set that reproduces the tensor (Llama 3.1 and 3.2 publish factor 8 and 32
 * with low/high frequency factors 1 and 4 over an original 8192 positions), and refuses a tensor no set
 * reproduces rather than run a rotary table it cannot name.
 */
import { ConfigError } from '../../errors.ts';
import type { ModelConfig, RopeScaling } from '../../policy/io/config.ts';

/**
 * convert_hf_to_gguf.py's Llama 3 `rope_freqs`: per rotary pair, the divisor llama.cpp applies to the
 * frequency (1 for short wavelengths, `factor` for long ones, smoothly in between), in float32.
 */
export function llama3RopeFactors(config: ModelConfig): Float32Array | null {
  const s = config.ropeScaling;
  if (!s) return null;
  const f = Math.fround;
  const dim = config.headDim;
  const lowWavelen = s.originalMaxPositionEmbeddings / s.lowFreqFactor;
  const highWavelen = s.originalMaxPositionEmbeddings / s.highFreqFactor;
  const out = new Float32Array(dim / 2);
  for (let i = 0; i < out.length; i++) {
    const freq = f(1 / f(config.ropeTheta ** f((2 * i) / dim)));
    const wavelen = f((2 * Math.PI) / freq);
    if (wavelen < highWavelen) out[i] = 1;
    else if (wavelen > lowWavelen) out[i] = s.factor;
    else {
      const smooth = f(
        f(f(s.originalMaxPositionEmbeddings / wavelen) - s.lowFreqFactor) / (s.highFreqFactor - s.lowFreqFactor),
      );
      out[i] = f(1 / f(f(f(1 - smooth) / s.factor) + smooth));
    }
  }
  return out;
}

/**
 * Parameter sets tried in order: Llama 3.x's published frequency factors (1 and 4) with power-of-two factors
 * and original contexts. Two sets that give the same factors give the same rotary table, so the first wins.
 */
const PUBLISHED: readonly Omit<RopeScaling, 'type'>[] = [8, 32, 16, 4, 2, 64].flatMap((factor) =>
  Array.from({ length: 14 }, (_, i) => 2 ** (i + 4)).map((originalMaxPositionEmbeddings) => ({
    factor,
    lowFreqFactor: 1,
    highFreqFactor: 4,
    originalMaxPositionEmbeddings,
  })),
);

/** The rope scaling whose factors equal `stored` (within float32 rounding of another implementation). */
export function ropeScalingOf(
  config: Pick<ModelConfig, 'headDim' | 'ropeTheta'>,
  stored: Float32Array,
  source: string,
): RopeScaling {
  if (stored.length !== config.headDim / 2)
    throw new ConfigError('model', `${source}: rope_freqs has ${stored.length} values for head_dim ${config.headDim}`);
  for (const p of PUBLISHED) {
    const scaling: RopeScaling = { type: 'llama3', ...p };
    const factors = llama3RopeFactors({ ...config, ropeScaling: scaling } as ModelConfig)!;
    if (factors.every((f, i) => Math.abs(f - stored[i]!) <= 1e-6 * Math.max(1, f))) return scaling;
  }
  throw new ConfigError(
    'model',
    `${source}: rope_freqs matches no Llama 3 rope scaling starpo knows (factor 2–64, frequency factors 1 and 4), ` +
      'so starpo cannot name the rotary table it would run',
  );
}
