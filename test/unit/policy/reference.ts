/**
 * A plain float64 TypeScript Qwen2/Qwen3/Llama forward pass written from HF transformers'
 * modeling_qwen2.py, modeling_qwen3.py and modeling_llama.py (loops, no graph): the second way
 * of computing the model for golden tests.
 * Weights are HF-named tensors; one sequence at a time, with HF's position ids for left padding.
 */
import type { ModelConfig } from '../../../src/policy/io/config.ts';
import type { Tensor } from '../../../src/policy/io/dtype.ts';

type W = Readonly<Record<string, Tensor>>;
const get = (w: W, n: string): ArrayLike<number> => w[n].data as ArrayLike<number>;

/** y = x·Wᵀ (+ b) for an HF [out, in] weight. */
function linear(x: number[], w: ArrayLike<number>, out: number, bias?: ArrayLike<number>): number[] {
  const d = x.length;
  return Array.from({ length: out }, (_, o) => {
    let s = bias ? bias[o] : 0;
    for (let i = 0; i < d; i++) s += x[i] * w[o * d + i];
    return s;
  });
}

function rmsNorm(x: number[], w: ArrayLike<number>, eps: number): number[] {
  const r = 1 / Math.sqrt(x.reduce((a, v) => a + v * v, 0) / x.length + eps);
  return x.map((v, i) => v * r * w[i]);
}

/**
 * Inverse rotary frequencies in float64, written from transformers' `_compute_llama3_parameters` for
 * `rope_scaling.rope_type = llama3` (long wavelengths divided by the factor, medium ones interpolated).
 */
function inverseFrequency(f: number, E: number, cfg: ModelConfig): number {
  const inv = 1 / cfg.ropeTheta ** ((2 * f) / E);
  const s = cfg.ropeScaling;
  if (!s) return inv;
  const wavelen = (2 * Math.PI) / inv;
  const [lowWavelen, highWavelen] = [
    s.originalMaxPositionEmbeddings / s.lowFreqFactor,
    s.originalMaxPositionEmbeddings / s.highFreqFactor,
  ];
  if (wavelen < highWavelen) return inv;
  if (wavelen > lowWavelen) return inv / s.factor;
  const smooth = (s.originalMaxPositionEmbeddings / wavelen - s.lowFreqFactor) / (s.highFreqFactor - s.lowFreqFactor);
  return ((1 - smooth) * inv) / s.factor + smooth * inv;
}

/** HF apply_rotary_pos_emb on one head vector: x·cos + rotate_half(x)·sin. */
function rope(x: number[], pos: number, cfg: ModelConfig): number[] {
  const E = x.length;
  return x.map((v, i) => {
    const a = pos * inverseFrequency(i % (E / 2), E, cfg);
    const rot = i < E / 2 ? -x[i + E / 2] : x[i - E / 2];
    return v * Math.cos(a) + rot * Math.sin(a);
  });
}

/** Logits [T][V] of one sequence; `mask[t]` = 0 marks padding (not attended, position ids as HF). */
export function referenceLogits(cfg: ModelConfig, w: W, tokens: number[], mask: number[]): number[][] {
  const { hiddenSize: D, numHeads: H, numKvHeads: K, headDim: E, intermediateSize: I, vocabSize: V } = cfg;
  let seen = 0;
  const pos = mask.map((m) => (m ? ++seen : seen) - 1).map((p) => Math.max(p, 0));
  const embed = get(w, 'model.embed_tokens.weight');
  let x = tokens.map((t) => Array.from({ length: D }, (_, i) => embed[t * D + i]));
  for (let l = 0; l < cfg.numLayers; l++) {
    const p = `model.layers.${l}`;
    const h = x.map((r) => rmsNorm(r, get(w, `${p}.input_layernorm.weight`), cfg.rmsNormEps));
    const proj = (n: string, out: number) =>
      h.map((r) =>
        linear(
          r,
          get(w, `${p}.self_attn.${n}_proj.weight`),
          out,
          cfg.attentionBias ? get(w, `${p}.self_attn.${n}_proj.bias`) : undefined,
        ),
      );
    const [q, k, v] = [proj('q', H * E), proj('k', K * E), proj('v', K * E)];
    // Qwen3: q_norm / k_norm, an RMSNorm over each head's vector, before the rotary embedding.
    const norm = (n: string, vec: number[]) =>
      cfg.qkNorm ? rmsNorm(vec, get(w, `${p}.self_attn.${n}_norm.weight`), cfg.rmsNormEps) : vec;
    const head = (rows: number[][], j: number, t: number) => rows[t].slice(j * E, (j + 1) * E);
    const attn = x.map((_, t) => {
      const out: number[] = [];
      for (let j = 0; j < H; j++) {
        const kvh = Math.floor(j / (H / K)); // repeat_kv
        const qj = rope(norm('q', head(q, j, t)), pos[t], cfg);
        const keys = [...Array(t + 1).keys()].filter((s) => mask[s]);
        const scores = keys.map(
          (s) => rope(norm('k', head(k, kvh, s)), pos[s], cfg).reduce((a, kv, i) => a + kv * qj[i], 0) / Math.sqrt(E),
        );
        const mx = Math.max(...scores);
        const e = scores.map((s) => Math.exp(s - mx));
        const z = e.reduce((a, b) => a + b, 0);
        const y = new Array<number>(E).fill(0);
        keys.forEach((s, n) => head(v, kvh, s).forEach((vv, i) => (y[i] += (e[n] / z) * vv)));
        out.push(...(keys.length ? y : new Array<number>(E).fill(0)));
      }
      return linear(out, get(w, `${p}.self_attn.o_proj.weight`), D);
    });
    x = x.map((r, t) => r.map((val, i) => val + attn[t][i]));
    const h2 = x.map((r) => rmsNorm(r, get(w, `${p}.post_attention_layernorm.weight`), cfg.rmsNormEps));
    const mlp = h2.map((r) => {
      const gate = linear(r, get(w, `${p}.mlp.gate_proj.weight`), I);
      const up = linear(r, get(w, `${p}.mlp.up_proj.weight`), I);
      return linear(
        gate.map((g, i) => (g / (1 + Math.exp(-g))) * up[i]),
        get(w, `${p}.mlp.down_proj.weight`),
        D,
      );
    });
    x = x.map((r, t) => r.map((val, i) => val + mlp[t][i]));
  }
  const head = cfg.tieWordEmbeddings ? embed : get(w, 'lm_head.weight');
  return x.map((r) => linear(rmsNorm(r, get(w, 'model.norm.weight'), cfg.rmsNormEps), head, V));
}

export function logSoftmaxRow(row: number[]): number[] {
  const m = Math.max(...row);
  const lse = m + Math.log(row.reduce((a, v) => a + Math.exp(v - m), 0));
  return row.map((v) => v - lse);
}
