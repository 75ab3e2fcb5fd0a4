/**
 * Folding LoRA adapters into the base weights, W' = W + (alpha / r)·B·A per adapted projection, as
 * PEFT's merge_and_unload does: the result is a plain model under HF names, to export or to load
 * into a policy without LoRA. Pure: the inputs are not modified.
 */
import { ConfigError } from '../../errors.ts';
import type { Tensor } from '../io/dtype.ts';
import type { Layout } from './layout.ts';
import { adapterName, baseName, loraScale, orderedTargets } from './lora.ts';
import { type Packed, toNamed } from './params.ts';

/**
 * HF-named F32 tensors of the merged model: the base's parameters with every adapted weight replaced
 * by its merged copy, plus the trained parameters that are not adapters (a critic's value head) —
 * exactly the parameters of a plain layout of the same config and role. Weights without adapters
 * view `base` (frozen, never written, and too large to copy for nothing); the value head is copied,
 * since a policy's trained buffers are reused by later steps.
 */
export function mergeLora(layout: Layout, base: Packed, adapters: Packed): Record<string, Tensor> {
  if (!layout.lora || !layout.frozen) throw new ConfigError('lora', 'merging needs a LoRA layout');
  const out: Record<string, Tensor> = { ...toNamed(layout.frozen, base) };
  const trained = toNamed(layout, adapters);
  for (const [name, t] of Object.entries(trained))
    if (!name.includes('.lora_')) out[name] = { ...t, data: t.data.slice() };
  const scale = loraScale(layout.lora);
  for (let i = 0; i < layout.config.numLayers; i++) {
    for (const t of orderedTargets(layout.lora)) {
      const w = out[baseName(i, t)];
      const merged = addLowRank(
        w.data as Float32Array,
        w.shape,
        trained[adapterName(i, t, 'B')],
        trained[adapterName(i, t, 'A')],
        scale,
      );
      out[baseName(i, t)] = { dtype: 'F32', shape: w.shape, data: merged };
    }
  }
  return out;
}

/** W [out, in] + scale·B [out, r]·A [r, in], each sum taken in float64 and rounded once. */
function addLowRank(w: Float32Array, shape: readonly number[], b: Tensor, a: Tensor, scale: number): Float32Array {
  const [rows, cols] = shape;
  const r = a.shape[0];
  const [bd, ad] = [b.data as Float32Array, a.data as Float32Array];
  const out = new Float32Array(w.length);
  const acc = new Float64Array(cols);
  for (let o = 0; o < rows; o++) {
    acc.fill(0);
    for (let k = 0; k < r; k++) {
      const f = bd[o * r + k];
      if (f === 0) continue;
      for (let c = 0; c < cols; c++) acc[c] += f * ad[k * cols + c];
    }
    for (let c = 0; c < cols; c++) out[o * cols + c] = w[o * cols + c] + scale * acc[c];
  }
  return out;
}
