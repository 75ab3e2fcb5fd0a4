/**
 * Rotary-embedding frequencies as HF transformers computes them (`rope_theta`, `rope_scaling` in
 * transformers 4.x configs, `rope_parameters` in 5.x), including Llama 3.x's `llama3` scaling: wavelengths
 * longer than original_max_position_embeddings / low_freq_factor are divided by `factor`, shorter than
 * … / high_freq_factor kept, and those between interpolated smoothly. Arithmetic is float32 (Math.fround
 * after every operation), as torch does it, so the tables match HF's bit for bit in the frequencies.
 */
import { ConfigError } from '../../errors.ts';

export interface RopeScaling {
  readonly type: 'llama3';
  readonly factor: number;
  readonly lowFreqFactor: number;
  readonly highFreqFactor: number;
  readonly originalMaxPositionEmbeddings: number;
}

const LLAMA3_KEYS = ['factor', 'low_freq_factor', 'high_freq_factor', 'original_max_position_embeddings'] as const;

/** rope_theta and the scaling from a raw config.json (either transformers generation's layout). */
export function parseRope(
  raw: Readonly<Record<string, unknown>>,
  headDim: number,
): { theta: number; scaling: RopeScaling | null } {
  const params = raw.rope_parameters ?? raw.rope_scaling;
  const field = raw.rope_parameters != null ? 'rope_parameters' : 'rope_scaling';
  if (params != null && (typeof params !== 'object' || Array.isArray(params)))
    throw new ConfigError(field, `${JSON.stringify(params)} is not an object`);
  const p = (params ?? {}) as Record<string, unknown>;
  const thetaValue = p.rope_theta ?? raw.rope_theta ?? 10000;
  if (typeof thetaValue !== 'number' || !(thetaValue > 1) || !Number.isFinite(thetaValue))
    throw new ConfigError(
      p.rope_theta != null ? `${field}.rope_theta` : 'rope_theta',
      `${JSON.stringify(thetaValue)} is not a number > 1`,
    );
  if (params == null) return { theta: thetaValue, scaling: null };
  const type = p.rope_type ?? p.type ?? 'default';
  const allowed = new Set(['rope_type', 'type', 'rope_theta', ...(type === 'llama3' ? LLAMA3_KEYS : [])]);
  if (type !== 'default' && type !== 'llama3')
    throw new ConfigError(`${field}.rope_type`, `${JSON.stringify(type)} is not supported (default or llama3)`);
  for (const key of Object.keys(p)) {
    if (!allowed.has(key)) throw new ConfigError(`${field}.${key}`, `is not supported for rope_type ${type}`);
  }
  if (type === 'default') return { theta: thetaValue, scaling: null };
  const num = (key: (typeof LLAMA3_KEYS)[number], min: number): number => {
    const v = p[key];
    if (typeof v !== 'number' || !Number.isFinite(v) || !(v > min))
      throw new ConfigError(`${field}.${key}`, `${JSON.stringify(v)} is not a number > ${min}`);
    return v;
  };
  const scaling: RopeScaling = {
    type: 'llama3',
    factor: num('factor', 0),
    lowFreqFactor: num('low_freq_factor', 0),
    highFreqFactor: num('high_freq_factor', 0),
    originalMaxPositionEmbeddings: num('original_max_position_embeddings', 0),
  };
  if (!(scaling.highFreqFactor > scaling.lowFreqFactor))
    throw new ConfigError(`${field}.high_freq_factor`, 'must exceed low_freq_factor');
  if (headDim % 2 !== 0) throw new ConfigError('head_dim', 'must be even for rotary embeddings');
  return { theta: thetaValue, scaling: Object.freeze(scaling) };
}

/** The config.json fields for these settings (transformers 4.x layout, which 5.x also reads). */
export function writeRope(theta: number, scaling: RopeScaling | null): Record<string, unknown> {
  if (!scaling) return { rope_theta: theta, rope_scaling: null };
  return {
    rope_theta: theta,
    rope_scaling: {
      rope_type: 'llama3',
      factor: scaling.factor,
      low_freq_factor: scaling.lowFreqFactor,
      high_freq_factor: scaling.highFreqFactor,
      original_max_position_embeddings: scaling.originalMaxPositionEmbeddings,
    },
  };
}

/** The E/2 inverse frequencies θ^(−2i/E), scaled as the config says, in float32. */
export function inverseFrequencies(theta: number, headDim: number, scaling: RopeScaling | null): Float32Array {
  const f = Math.fround;
  const out = new Float32Array(headDim / 2);
  for (let i = 0; i < headDim / 2; i++) out[i] = f(1 / f(theta ** f((2 * i) / headDim)));
  if (!scaling) return out;
  const { factor, lowFreqFactor: low, highFreqFactor: high, originalMaxPositionEmbeddings: old } = scaling;
  const lowWavelen = f(old / low);
  const highWavelen = f(old / high);
  for (let i = 0; i < out.length; i++) {
    const inv = out[i];
    // torch's scalar / tensor is tensor.reciprocal() * scalar: two roundings, not one division.
    const wavelen = f(f(1 / inv) * f(2 * Math.PI));
    const scaled = wavelen > lowWavelen ? f(inv / factor) : inv;
    if (wavelen < highWavelen || wavelen > lowWavelen) {
      out[i] = scaled;
      continue;
    }
    const smooth = f(f(f(f(1 / wavelen) * old) - low) / f(high - low));
    out[i] = f(f(f(f(1 - smooth) * scaled) / factor) + f(smooth * scaled));
  }
  return out;
}
