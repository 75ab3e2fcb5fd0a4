/**
 * Shared by the GGUF export tests: llama.cpp (node-llama-cpp's prebuilt CPU binaries, loaded once), next-token
 * log-probabilities from it, and the tiny transformers fixture models made exportable by a tokenizer of their
 * own (the fixtures have none; GGUF must carry one).
 */
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type ControlledEvaluateInputItem,
  type Llama,
  type LlamaModel,
  LlamaLogLevel,
  type Token,
  getLlama,
} from 'node-llama-cpp';

export const FIXTURES = new URL('../../fixtures/hf-models/', import.meta.url).pathname;

let llama: Promise<Llama> | undefined;
export function cpuLlama(): Promise<Llama> {
  llama ??= getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error });
  return llama;
}

export async function loadGguf(path: string, vocabOnly = false): Promise<LlamaModel> {
  return (await cpuLlama()).loadModel({ modelPath: path, vocabOnly });
}

/**
 * A llama.cpp sequence fed tokens in steps; `feed` returns log p(v | everything fed so far) after each fed
 * token from position `from` of this step on (the probabilities of a 150k vocabulary are costly: ask only
 * for those needed). The KV cache is F32 (llama.cpp's default F16 cache alone moves log-probs by ~1e-2)
 * and flash attention off, so what is left is float32 arithmetic in a different order.
 */
export async function llamaSequence(model: LlamaModel, vocabSize: number, contextSize = 256) {
  const context = await model.createContext({
    // One thread: ggml's spinning workers made each pass ~2 s on a 2-core machine instead of ~5 ms.
    threads: 1,
    contextSize,
    batchSize: contextSize,
    experimentalKvCacheKeyType: 'F32',
    experimentalKvCacheValueType: 'F32',
    flashAttention: false,
  });
  const seq = context.getSequence();
  return {
    async feed(ids: readonly number[], from = 0): Promise<Float64Array[]> {
      const want = { generateNext: { probabilities: true } };
      const input = ids.map((t, i) => (i >= from ? [t as Token, want] : (t as Token))) as ControlledEvaluateInputItem[];
      const out = await seq.controlledEvaluate(input);
      return out.slice(from).map((o) => {
        const lp = new Float64Array(vocabSize).fill(-Infinity);
        for (const [v, p] of o!.next.probabilities!) lp[v] = Math.log(p);
        return lp;
      });
    },
    dispose: () => context.dispose(),
  };
}

/** log p(v | ids[0..p]) for every position p (from `from` on) and every token v, from one llama.cpp pass. */
export async function llamaLogprobs(
  model: LlamaModel,
  ids: readonly number[],
  vocabSize: number,
  from = 0,
): Promise<Float64Array[]> {
  const seq = await llamaSequence(model, vocabSize, Math.max(64, ids.length));
  try {
    return await seq.feed(ids, from);
  } finally {
    await seq.dispose();
  }
}

/** log_softmax of a row of logits, in float64. */
export function logSoftmax(row: readonly number[]): Float64Array {
  let m = -Infinity;
  for (const x of row) m = Math.max(m, x);
  let s = 0;
  for (const x of row) s += Math.exp(x - m);
  const lse = m + Math.log(s);
  return Float64Array.from(row, (x) => x - lse);
}

export const argmax = (row: ArrayLike<number>): number => {
  let best = 0;
  for (let i = 1; i < row.length; i++) if (row[i]! > row[best]!) best = i;
  return best;
};

export interface LogitsCase {
  input_ids: number[][];
  attention_mask: number[][];
  logits: number[][][];
}

export function fixtureCases(name: string): LogitsCase[] {
  return (JSON.parse(readFileSync(join(FIXTURES, name, 'logits.json'), 'utf8')) as { cases: LogitsCase[] }).cases;
}

const QWEN2_SPLIT =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|" +
  '\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+';

/**
 * A copy of fixture model `name` in a fresh directory under `scratch`, with a 96-token byte-level BPE
 * tokenizer: the config's bos/eos ids as special tokens `<|s{id}|>`, every other id one printable
 * character, Qwen2's split. Only its ids matter: the fixtures' logits are for id sequences.
 */
export function withTokenizer(scratch: string, name: string): string {
  const dir = mkdtempSync(join(scratch, `${name}-`));
  cpSync(join(FIXTURES, name), dir, { recursive: true });
  const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
  const eos = [config.eos_token_id].flat() as number[];
  const specials = new Set([config.bos_token_id as number, ...eos]);
  const vocab: Record<string, number> = {};
  const added = [];
  for (let id = 0, ch = 0x21; id < (config.vocab_size as number); id++) {
    const content = specials.has(id) ? `<|s${id}|>` : String.fromCodePoint(ch++);
    vocab[content] = id;
    if (specials.has(id))
      added.push({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  }
  const tokenizer = {
    version: '1.0',
    added_tokens: added,
    normalizer: null,
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        { type: 'Split', pattern: { Regex: QWEN2_SPLIT }, behavior: 'Isolated', invert: false },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
      ],
    },
    post_processor: null,
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
    model: { type: 'BPE', dropout: null, unk_token: null, byte_fallback: false, vocab, merges: [] },
  };
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(tokenizer));
  writeFileSync(
    join(dir, 'tokenizer_config.json'),
    JSON.stringify({ bos_token: `<|s${config.bos_token_id}|>`, eos_token: `<|s${eos[0]}|>`, add_bos_token: false }),
  );
  return dir;
}
