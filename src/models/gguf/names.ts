/**
 * llama.cpp's tensor names and row order against Hugging Face's, for the decoder architectures starpo runs
 * (llama, qwen2, qwen3). One table serves import and export, so the two cannot drift apart. llama.cpp's
 * converter reorders the rows of Llama-family q/k projections (weights and biases) for its rotary layout:
 * within each head it interleaves the two rotary halves. Qwen2/Qwen3 files keep Hugging Face's order.
 */
import { ConfigError } from '../../errors.ts';
import type { ModelType } from '../../policy/io/config-keys.ts';

export const GGUF_ARCHITECTURES = ['llama', 'qwen2', 'qwen3'] as const satisfies readonly ModelType[];
export type GgufArchitecture = (typeof GGUF_ARCHITECTURES)[number];

export function ggufArchitecture(name: unknown, source: string): GgufArchitecture {
  if (typeof name === 'string' && (GGUF_ARCHITECTURES as readonly string[]).includes(name))
    return name as GgufArchitecture;
  throw new ConfigError(
    'model',
    `${source}: architecture ${JSON.stringify(name)} is not supported (starpo runs ${GGUF_ARCHITECTURES.join(', ')})`,
  );
}

const GLOBAL: Readonly<Record<string, string>> = {
  'token_embd.weight': 'model.embed_tokens.weight',
  'output_norm.weight': 'model.norm.weight',
  'output.weight': 'lm_head.weight',
};

const PER_LAYER: Readonly<Record<string, string>> = {
  'attn_norm.weight': 'input_layernorm.weight',
  'attn_q.weight': 'self_attn.q_proj.weight',
  'attn_k.weight': 'self_attn.k_proj.weight',
  'attn_v.weight': 'self_attn.v_proj.weight',
  'attn_q.bias': 'self_attn.q_proj.bias',
  'attn_k.bias': 'self_attn.k_proj.bias',
  'attn_v.bias': 'self_attn.v_proj.bias',
  'attn_output.weight': 'self_attn.o_proj.weight',
  'attn_q_norm.weight': 'self_attn.q_norm.weight',
  'attn_k_norm.weight': 'self_attn.k_norm.weight',
  'ffn_norm.weight': 'post_attention_layernorm.weight',
  'ffn_gate.weight': 'mlp.gate_proj.weight',
  'ffn_up.weight': 'mlp.up_proj.weight',
  'ffn_down.weight': 'mlp.down_proj.weight',
};
const PER_LAYER_HF = new Map(Object.entries(PER_LAYER).map(([g, h]) => [h, g]));
const GLOBAL_HF = new Map(Object.entries(GLOBAL).map(([g, h]) => [h, g]));

/** The Hugging Face name of a llama.cpp tensor; null when the name is not one of a decoder's. */
export function hfTensorName(gguf: string): string | null {
  const global = GLOBAL[gguf];
  if (global) return global;
  const m = /^blk\.(\d+)\.(.+)$/.exec(gguf);
  const local = m ? PER_LAYER[m[2]!] : undefined;
  return local ? `model.layers.${m![1]}.${local}` : null;
}

/** The llama.cpp name of a Hugging Face tensor; null when it has none. */
export function ggufTensorName(hf: string): string | null {
  const global = GLOBAL_HF.get(hf);
  if (global) return global;
  const m = /^model\.layers\.(\d+)\.(.+)$/.exec(hf);
  const local = m ? PER_LAYER_HF.get(m[2]!) : undefined;
  return local ? `blk.${m![1]}.${local}` : null;
}

/**
 * How many heads a tensor's rows are reordered over in llama.cpp's layout (q: attention heads, k: key/value
 * heads), or 0 when its rows are stored in Hugging Face's order.
 */
export function permutedHeads(
  arch: GgufArchitecture,
  gguf: string,
  heads: { readonly attention: number; readonly keyValue: number },
): number {
  if (arch !== 'llama') return 0;
  if (/^blk\.\d+\.attn_q\.(weight|bias)$/.test(gguf)) return heads.attention;
  if (/^blk\.\d+\.attn_k\.(weight|bias)$/.test(gguf)) return heads.keyValue;
  return 0;
}

/**
 * Reorders the rows of a row-major [rows, cols] matrix between the two layouts. Within each head of
 * `rows / heads` rows, Hugging Face row (j·half + i) is llama.cpp row (2i + j), j ∈ {0, 1}, i < half.
 * `toGguf` false undoes the converter's order (import); true applies it (export).
 */
export function permuteHeadRows(data: Float32Array, rows: number, heads: number, toGguf: boolean): Float32Array {
  const cols = data.length / rows;
  const headDim = rows / heads;
  if (!Number.isInteger(cols) || !Number.isInteger(headDim) || headDim % 2 !== 0)
    throw new RangeError(`cannot reorder ${rows} rows over ${heads} heads`);
  const half = headDim / 2;
  const out = new Float32Array(data.length);
  for (let h = 0; h < heads; h++) {
    for (let i = 0; i < half; i++) {
      for (let j = 0; j < 2; j++) {
        const hfRow = h * headDim + j * half + i;
        const ggufRow = h * headDim + 2 * i + j;
        const [from, to] = toGguf ? [hfRow, ggufRow] : [ggufRow, hfRow];
        out.set(data.subarray(from * cols, (from + 1) * cols), to * cols);
      }
    }
  }
  return out;
}
