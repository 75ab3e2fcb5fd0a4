/**
 * A Hugging Face byte-level BPE tokenizer (tokenizer.json, tokenizer_config.json, config.json's token ids) as
 * GGUF `tokenizer.*` metadata, the way llama.cpp's convert_hf_to_gguf.py writes it (its get_vocab_base and
 * the gguf package's SpecialVocab): the vocabulary in id order, padded to the model's vocab_size with
 * `[PAD{id}]` tokens, token types (added special tokens are control, other added tokens user-defined),
 * merges, special ids and the chat template. The converter names the pre-tokenizer by hashing the ids of a
 * test string; starpo has the tokenizer.json itself and recognises the three splits its models use by their
 * definition. Any other split is refused: llama.cpp would apply a different one and change the tokens.
 */
import { ConfigError } from '../../errors.ts';
import { LLAMA3_SPLIT, QWEN2_SPLIT, TOKEN_TYPE } from './tokenizer.ts';
import { type GgufEntry, gguf } from './writer.ts';

const { NORMAL, CONTROL, USER_DEFINED, UNUSED } = TOKEN_TYPE;

interface AddedToken {
  readonly id: number;
  readonly content: string;
  readonly special?: boolean;
}

type Json = Record<string, unknown>;

export interface VocabSources {
  readonly tokenizerJson: string;
  readonly tokenizerConfig?: string;
  /** chat_template.jinja, used when tokenizer_config.json has no chat_template (as SpecialVocab does). */
  readonly chatTemplateFile?: string;
  /** config.json as an object: its `{bos,eos,pad,unk}_token_id` fill in what tokenizer_config.json lacks. */
  readonly modelConfig: Json;
  readonly vocabSize: number;
  /** Where the files came from, for messages. */
  readonly source: string;
}

/** The pre-tokenizer name llama.cpp knows for this tokenizer.json's pre_tokenizer, or a one-line refusal. */
export function preTokenizerName(pre: unknown, source: string): string {
  const steps = isObject(pre) && pre.type === 'Sequence' && Array.isArray(pre.pretokenizers) ? pre.pretokenizers : [];
  const [first, second] = steps as unknown[];
  if (steps.length === 2 && isObject(first) && isObject(second) && second.type === 'ByteLevel') {
    if (first.type === 'Digits' && first.individual_digits === true && second.use_regex === true) return 'smollm';
    const regex = first.type === 'Split' && isObject(first.pattern) ? first.pattern.Regex : undefined;
    if (second.use_regex === false && regex === QWEN2_SPLIT) return 'qwen2';
    if (second.use_regex === false && regex === LLAMA3_SPLIT) return 'llama-bpe';
  }
  throw new ConfigError(
    'tokenizer.json',
    `${source}: pre_tokenizer ${JSON.stringify(pre).slice(0, 160)} is not one llama.cpp is known to split as ` +
      '(SmolLM2 digits + byte-level, the Qwen2 or the Llama 3 regex); GGUF export would change the tokens',
  );
}

/** convert_hf_to_gguf.py's does_token_look_special, for the spellings these models use. */
function looksSpecial(token: string): boolean {
  return (
    ['<pad>', '<mask>', '<2mass>', '[@BOS@]'].includes(token) ||
    (token.startsWith('<|') && token.endsWith('|>')) ||
    (token.startsWith('<｜') && token.endsWith('｜>')) ||
    (token.startsWith('<unused') && token.endsWith('>'))
  );
}

/** The tokenizer.* metadata entries, in the order the converter writes them. */
export function vocabMetadata(s: VocabSources): [string, GgufEntry][] {
  const tok = parseJson(s.tokenizerJson, 'tokenizer.json', s.source);
  const config =
    s.tokenizerConfig === undefined ? null : parseJson(s.tokenizerConfig, 'tokenizer_config.json', s.source);
  const model = isObject(tok.model) ? tok.model : {};
  if (model.type !== 'BPE' || model.byte_fallback === true)
    throw new ConfigError(
      'tokenizer.json',
      `${s.source}: model ${JSON.stringify(model.type)} is not byte-level BPE ("gpt2", what GGUF export writes)`,
    );
  const pre = preTokenizerName(tok.pre_tokenizer, s.source);
  const vocab = isObject(model.vocab) ? (model.vocab as Record<string, number>) : {};
  const added = (Array.isArray(tok.added_tokens) ? tok.added_tokens : []) as AddedToken[];
  const byId = new Map<number, string>(Object.entries(vocab).map(([t, id]) => [id, t]));
  for (const a of added) byId.set(a.id, a.content);
  let maxId = -1;
  for (const id of byId.keys()) maxId = Math.max(maxId, id);
  if (maxId >= s.vocabSize)
    throw new ConfigError('vocab_size', `${s.source}: token id ${maxId} is past the model's vocab_size ${s.vocabSize}`);
  const addedByContent = new Map(added.map((a) => [a.content, a]));
  const tokens: string[] = [];
  const types: number[] = [];
  for (let id = 0; id < s.vocabSize; id++) {
    const token = byId.get(id);
    const a = token === undefined ? undefined : addedByContent.get(token);
    if (token === undefined) {
      tokens.push(`[PAD${id}]`);
      types.push(UNUSED);
    } else if (a) {
      const control = a.special === true || looksSpecial(token);
      // Gemma-style "▁" spaces in user-defined tokens are pre-normalised, as the converter does.
      tokens.push(control ? token : token.replaceAll('\u2581', ' '));
      types.push(control ? CONTROL : USER_DEFINED);
    } else {
      tokens.push(token);
      types.push(NORMAL);
    }
  }
  const out: [string, GgufEntry][] = [
    ['tokenizer.ggml.model', gguf.str('gpt2')],
    ['tokenizer.ggml.pre', gguf.str(pre)],
    ['tokenizer.ggml.tokens', gguf.strings(tokens)],
    ['tokenizer.ggml.token_type', gguf.i32s(types)],
    ['tokenizer.ggml.merges', gguf.strings(mergeStrings(model.merges, s.source))],
  ];
  const idOf = (typ: string): number | null => {
    const entry = config?.[`${typ}_token`];
    const content = typeof entry === 'string' ? entry : isObject(entry) ? entry.content : undefined;
    const fromConfig = added.find((t) => t.content === content)?.id;
    const fromModel = s.modelConfig[`${typ}_token_id`];
    const id = fromConfig ?? (Number.isSafeInteger(fromModel) ? (fromModel as number) : null);
    return id !== null && id >= 0 && id < s.vocabSize ? id : null;
  };
  for (const [typ, key] of [
    ['bos', 'bos_token_id'],
    ['eos', 'eos_token_id'],
    ['unk', 'unknown_token_id'],
    ['pad', 'padding_token_id'],
  ] as const) {
    const id = idOf(typ);
    if (id !== null) out.push([`tokenizer.ggml.${key}`, gguf.u32(id)]);
  }
  const addSpecial = postProcessorAdds(tok.post_processor, config);
  for (const typ of ['bos', 'eos'] as const) {
    const stated = config?.[`add_${typ}_token`];
    // Written even when unstated (false, what the HF tokenizer then does) so llama.cpp does not guess.
    out.push([`tokenizer.ggml.add_${typ}_token`, gguf.bool(typeof stated === 'boolean' ? stated : addSpecial[typ])]);
  }
  const template = config?.chat_template ?? s.chatTemplateFile;
  if (typeof template === 'string') out.push(['tokenizer.chat_template', gguf.str(template)]);
  else if (Array.isArray(template)) out.push(...namedTemplates(template, s.source));
  return out;
}

/** SpecialVocab's reading of a TemplateProcessing post-processor: a leading bos / trailing eos is added. */
function postProcessorAdds(post: unknown, config: Json | null): { bos: boolean; eos: boolean } {
  const found = { bos: false, eos: false };
  const processors = isObject(post) ? (Array.isArray(post.processors) ? post.processors : [post]) : [];
  const name = (e: unknown) => (isObject(e) && isObject(e.SpecialToken) ? e.SpecialToken.id : undefined);
  const text = (e: unknown) => (typeof e === 'string' ? e : isObject(e) ? e.content : undefined);
  for (const p of processors as unknown[]) {
    if (!isObject(p) || p.type !== 'TemplateProcessing' || !Array.isArray(p.single) || p.single.length < 2) continue;
    const first = name(p.single[0]);
    const last = name(p.single[p.single.length - 1]);
    if (first !== undefined) found.bos = config === null || first === text(config.bos_token);
    if (last !== undefined) found.eos = config === null || last === text(config.eos_token);
  }
  return found;
}

/** tokenizer.json merges as "a b" strings; pair lists get their spaces spelled as the byte alphabet's "Ġ". */
function mergeStrings(merges: unknown, source: string): string[] {
  if (!Array.isArray(merges)) return [];
  return merges.map((m: unknown) => {
    if (typeof m === 'string') return m;
    if (Array.isArray(m) && m.length === 2 && m.every((p) => typeof p === 'string'))
      return m.map((p: string) => p.replaceAll(' ', '\u0120')).join(' ');
    throw new ConfigError('tokenizer.json', `${source}: merge ${JSON.stringify(m)} is neither "a b" nor ["a", "b"]`);
  });
}

/** A list of named templates: the default one as tokenizer.chat_template, the others under their names. */
function namedTemplates(list: unknown[], source: string): [string, GgufEntry][] {
  return list.map((t): [string, GgufEntry] => {
    if (!isObject(t) || typeof t.name !== 'string' || typeof t.template !== 'string')
      throw new ConfigError('chat_template', `${source}: a chat_template list entry is not {name, template}`);
    const key = t.name === 'default' ? 'tokenizer.chat_template' : `tokenizer.chat_template.${t.name}`;
    return [key, gguf.str(t.template)];
  });
}

function parseJson(text: string, file: string, source: string): Json {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (cause) {
    throw new ConfigError(file, `${source}: not valid JSON`, { cause });
  }
  if (!isObject(v)) throw new ConfigError(file, `${source}: not a JSON object`);
  return v;
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
