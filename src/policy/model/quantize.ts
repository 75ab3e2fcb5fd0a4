/**
 * Int8 weights for the rollout engine's decode step (PolicyOptions.rolloutWeights): every projection of the base
 * model and its LM head, quantized symmetrically in blocks of 32 inputs (one float32 scale per block, max|w| / 127),
 * as onnxruntime's com.microsoft MatMulNBits reads them. The embedding lookup, the norms, biases and LoRA adapters stay
 * float32. Training and scoring never see these weights: rollouts sample from them, the trainer recomputes log-probs
 * in float32, and the gap is what truncated importance sampling corrects (engine/README.md has the measurements).
 */
import type { Layout, ParamView } from './layout.ts';
import type { Packed } from './params.ts';

export const QUANT_BLOCK = 32;
export const QUANT_BITS = 8;
/**
 * MatMulNBits' accuracy_level 4: activations quantized to int8 per block, integer dot products (VNNI/AMX where the
 * CPU has them). Level 0 (float32 arithmetic on dequantized weights) measured 5–20× slower than the float32 Gemm.
 */
export const QUANT_ACCURACY = 4;

export interface Int8Blocks {
  /** [rows, ⌈cols / 32⌉, 32]: code = 128 + round(w / scale); the padding of a last partial block is 128 (zero). */
  readonly codes: Uint8Array;
  /** [rows · ⌈cols / 32⌉]. */
  readonly scales: Float32Array;
}

/**
 * Row-major w [rows, cols] in symmetric int8 blocks along cols; code = ⌊w / scale + 128.5⌋ (rounding half up), in
 * 1…255. Written for speed (the whole model is quantized again after every update): ~2.5 ns a weight.
 */
export function quantizeInt8(w: Float32Array, rows: number, cols: number): Int8Blocks {
  if (w.length !== rows * cols) throw new RangeError(`quantizeInt8: ${w.length} values for [${rows}, ${cols}]`);
  const blocks = Math.ceil(cols / QUANT_BLOCK);
  const codes = new Uint8Array(rows * blocks * QUANT_BLOCK).fill(128);
  const scales = new Float32Array(rows * blocks);
  for (let r = 0; r < rows; r++) {
    for (let b = 0; b < blocks; b++) {
      const start = r * cols + b * QUANT_BLOCK;
      const end = r * cols + Math.min(cols, (b + 1) * QUANT_BLOCK);
      let max = 0;
      for (let i = start; i < end; i++) {
        const a = w[i] < 0 ? -w[i] : w[i];
        if (a > max) max = a;
      }
      const scale = Math.fround(max / 127);
      scales[r * blocks + b] = scale;
      if (scale === 0) continue;
      const out = (r * blocks + b) * QUANT_BLOCK - start;
      for (let i = start; i < end; i++) {
        const x = w[i] / scale + 128.5;
        codes[out + i] = x < 1 ? 1 : x >= 255 ? 255 : x; // a Uint8Array store truncates
      }
    }
  }
  return { codes, scales };
}

/** w = (code − 128) · scale: what MatMulNBits multiplies by (tests compare against it). */
export function dequantizeInt8(q: Int8Blocks, rows: number, cols: number): Float32Array {
  const blocks = Math.ceil(cols / QUANT_BLOCK);
  const w = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++)
    for (let c = 0; c < cols; c++) {
      const b = Math.floor(c / QUANT_BLOCK);
      w[r * cols + c] = (q.codes[(r * blocks + b) * QUANT_BLOCK + (c % QUANT_BLOCK)] - 128) * q.scales[r * blocks + b];
    }
  return w;
}

const PROJECTION = /^\d+\.(qkv|o|gate|up|down)$/;

/**
 * The base model's views a quantized decode reads as int8: every projection and the LM head (the embedding's view
 * when the head is tied to it; the lookup then still reads it in float32). With LoRA the base is the frozen one.
 */
export function quantizedViews(layout: Layout): ParamView[] {
  const base = layout.frozen ?? layout;
  const views = base.views.filter((v) => PROJECTION.test(v.key) || v.key === 'lm_head');
  const tied = !base.views.some((v) => v.key === 'lm_head');
  return tied ? [...views, ...base.views.filter((v) => v.key === 'embed')] : views;
}

export const codesName = (key: string): string => `q8.${key}.codes`;
export const scalesName = (key: string): string => `q8.${key}.scales`;

/** The int8 inputs of a quantized program by name, quantized from the packed base (the frozen one under LoRA). */
export function quantizeViews(layout: Layout, base: Packed): Map<string, Uint8Array | Float32Array> {
  const out = new Map<string, Uint8Array | Float32Array>();
  for (const v of quantizedViews(layout)) {
    const [rows, cols] = v.shape;
    const q = quantizeInt8(base[v.group].subarray(v.offset, v.offset + v.size), rows, cols);
    out.set(codesName(v.key), q.codes);
    out.set(scalesName(v.key), q.scales);
  }
  return out;
}
