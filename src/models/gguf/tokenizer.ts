/**
 * A GGUF's tokenizer (`tokenizer.ggml.*` metadata) as the Hugging Face files starpo loads: tokenizer.json and
 * tokenizer_config.json with the chat template. Built as transformers' GGUF loader builds it (byte-level BPE
 * over the file's tokens and merges, control tokens as special added tokens, user-defined ones as plain added
 * tokens, the split regex the file's pre-tokenizer name stands for), with one deliberate difference: where
 * transformers has no entry for a pre-tokenizer name it falls back to GPT-2's split, which for `smollm`
 * (SmolLM2) drops the model's own digit splitting; starpo splits digits one by one as llama.cpp and the
 * model's original tokenizer.json do. Any other unknown name is refused: a wrong split changes the tokens.
 */
import { ConfigError } from '../../errors.ts';
import type { GgufValue } from './reader.ts';

/** The split regexes behind llama.cpp's pre-tokenizer names (as the tokenizers' own tokenizer.json spell them). */
const splitOf = (numbers: string): string =>
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|" +
  numbers +
  '| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+';
/** Llama 3 groups up to three digits; Qwen2 splits every digit. */
export const LLAMA3_SPLIT = splitOf('\\p{N}{1,3}');
export const QWEN2_SPLIT = splitOf('\\p{N}');

const BYTE_LEVEL = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
const split = (regex: string): object => ({
  type: 'Sequence',
  pretokenizers: [
    { type: 'Split', pattern: { Regex: regex }, behavior: 'Isolated', invert: false },
    { ...BYTE_LEVEL, use_regex: false },
  ],
});

interface PreTokenizer {
  readonly pre: object;
  /** Look a whole pre-token up in the vocabulary before merging (Llama 3's tokenizer.json, llama.cpp's LLAMA3). */
  readonly ignoreMerges: boolean;
}
const LLAMA3: PreTokenizer = { pre: split(LLAMA3_SPLIT), ignoreMerges: true };
const QWEN2: PreTokenizer = { pre: split(QWEN2_SPLIT), ignoreMerges: false };

/** Pre-tokenizer name (tokenizer.ggml.pre) → tokenizer.json pre_tokenizer. */
const PRE_TOKENIZERS: Readonly<Record<string, PreTokenizer>> = {
  default: { pre: BYTE_LEVEL, ignoreMerges: false },
  gpt2: { pre: BYTE_LEVEL, ignoreMerges: false },
  smollm: {
    pre: { type: 'Sequence', pretokenizers: [{ type: 'Digits', individual_digits: true }, BYTE_LEVEL] },
    ignoreMerges: false,
  },
  'llama-bpe': LLAMA3,
  'llama-v3': LLAMA3,
  llama3: LLAMA3,
  'smaug-bpe': LLAMA3,
  qwen2: QWEN2,
  'deepseek-r1-qwen': QWEN2,
};

/** The tokenizer files (by name) and the special-token ids the model config repeats. */
export interface GgufTokenizerFiles {
  readonly files: Record<string, string>;
  readonly bosTokenId: number | null;
  readonly eosTokenId: number;
  readonly padTokenId: number | null;
  readonly vocabSize: number;
}

/** gguf's TokenType values. */
export const TOKEN_TYPE = { NORMAL: 1, CONTROL: 3, USER_DEFINED: 4, UNUSED: 5 } as const;
const { CONTROL, USER_DEFINED } = TOKEN_TYPE;

/** GPT-2's byte → printable character table (the alphabet byte-level BPE vocabularies are written in). */
function byteAlphabet(): string[] {
  const printable = (b: number) => (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
  const out: string[] = [];
  let next = 256;
  for (let b = 0; b < 256; b++) out[b] = String.fromCodePoint(printable(b) ? b : next++);
  return out;
}

export function ggufTokenizerFiles(meta: ReadonlyMap<string, GgufValue>, source: string): GgufTokenizerFiles {
  const get = (key: string) => meta.get(`tokenizer.ggml.${key}`);
  const model = get('model');
  if (model !== 'gpt2')
    throw new ConfigError(
      'model',
      `${source}: tokenizer.ggml.model ${JSON.stringify(model ?? null)} is not supported ` +
        '(starpo imports byte-level BPE tokenizers, "gpt2")',
    );
  const preName = get('pre') ?? 'default';
  const pre = typeof preName === 'string' ? PRE_TOKENIZERS[preName] : undefined;
  if (!pre)
    throw new ConfigError(
      'model',
      `${source}: tokenizer.ggml.pre ${JSON.stringify(preName)} is not known to starpo ` +
        `(known: ${Object.keys(PRE_TOKENIZERS).join(', ')}); its split would change the tokens`,
    );
  const tokens = stringArray(get('tokens'), 'tokenizer.ggml.tokens', source);
  const merges = get('merges') === undefined ? [] : stringArray(get('merges'), 'tokenizer.ggml.merges', source);
  const types = get('token_type') === undefined ? [] : intArray(get('token_type'), 'token_type', source);
  const alphabet = byteAlphabet();
  const letters = new Set(alphabet);
  const inAlphabet = (t: string) => [...t].every((ch) => letters.has(ch));
  const utf8 = new TextEncoder();
  const vocab: Record<string, number> = {};
  tokens.forEach((t, id) => {
    const spelled = inAlphabet(t) ? t : [...utf8.encode(t)].map((b) => alphabet[b]).join('');
    if (!Object.hasOwn(vocab, spelled)) vocab[spelled] = id;
  });
  const added = tokens.flatMap((content, id) => {
    const type = types[id];
    // A control token outside the byte alphabet is a llama.cpp mislabel (transformers skips it too).
    const special = type === CONTROL && inAlphabet(content);
    if (!special && !(type === USER_DEFINED && vocab[content] === id)) return [];
    return [{ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special }];
  });
  const id = (key: string): number | null => {
    const v = get(key);
    if (v === undefined) return null;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v >= tokens.length)
      throw new ConfigError('model', `${source}: tokenizer.ggml.${key} ${String(v)} is not a token id`);
    return v;
  };
  const bos = id('bos_token_id');
  const eos = id('eos_token_id');
  if (eos === null) throw new ConfigError('model', `${source}: tokenizer.ggml.eos_token_id is missing`);
  const pad = id('padding_token_id');
  const unk = id('unknown_token_id');
  const addBos = meta.get('tokenizer.ggml.add_bos_token') === true;
  const tokenizerJson = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: null,
    pre_tokenizer: pre.pre,
    post_processor: postProcessor(addBos && bos !== null ? tokens[bos]! : null, bos),
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: '',
      end_of_word_suffix: '',
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: pre.ignoreMerges,
      vocab,
      merges: merges.map((m) => splitMerge(m, source)),
    },
  };
  const template = meta.get('tokenizer.chat_template');
  const tokenText = (i: number | null) => (i === null ? null : tokens[i]!);
  const tokenizerConfig = {
    add_bos_token: addBos,
    add_eos_token: meta.get('tokenizer.ggml.add_eos_token') === true,
    bos_token: tokenText(bos),
    eos_token: tokenText(eos),
    pad_token: tokenText(pad),
    unk_token: tokenText(unk),
    ...(typeof template === 'string' && { chat_template: template }),
    tokenizer_class: 'PreTrainedTokenizerFast',
  };
  return {
    files: {
      'tokenizer.json': `${JSON.stringify(tokenizerJson)}\n`,
      'tokenizer_config.json': `${JSON.stringify(tokenizerConfig, null, 2)}\n`,
    },
    bosTokenId: bos,
    eosTokenId: eos,
    padTokenId: pad,
    vocabSize: tokens.length,
  };
}

function postProcessor(bosToken: string | null, bosId: number | null): object {
  const bos = bosToken === null ? [] : [{ SpecialToken: { id: bosToken, type_id: 0 } }];
  return {
    type: 'TemplateProcessing',
    single: [...bos, { Sequence: { id: 'A', type_id: 0 } }],
    pair: [...bos, { Sequence: { id: 'A', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }],
    special_tokens: bosToken === null ? {} : { [bosToken]: { id: bosToken, ids: [bosId], tokens: [bosToken] } },
  };
}

function splitMerge(merge: string, source: string): [string, string] {
  const parts = merge.split(' ');
  if (parts.length !== 2 || !parts[0] || !parts[1])
    throw new ConfigError('model', `${source}: merge ${JSON.stringify(merge)} is not two tokens`);
  return parts as [string, string];
}

function stringArray(v: GgufValue | undefined, key: string, source: string): string[] {
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string'))
    throw new ConfigError('model', `${source}: ${key} is missing or not a list of strings`);
  return v as string[];
}

function intArray(v: GgufValue | undefined, key: string, source: string): number[] {
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'number'))
    throw new ConfigError('model', `${source}: tokenizer.ggml.${key} is not a list of integers`);
  return v as number[];
}
