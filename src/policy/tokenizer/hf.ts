/**
 * Hugging Face tokenizers (tokenizer.json: byte-level BPE as Qwen2 and Llama 3 use, and the other HF models)
 * through @huggingface/tokenizers, a dependency-free pure-JS port maintained by Hugging Face. Which ids are
 * BOS/EOS/PAD is not in tokenizer.json but in tokenizer_config.json, so both are read.
 */
import { Tokenizer as HfLibTokenizer } from '@huggingface/tokenizers';
import { ConfigError } from '../../errors.ts';
import type { DecodeOptions, Tokenizer } from './types.ts';
import { TOKENIZER_CONFIG_FILE, TOKENIZER_FILE } from './types.ts';

/** Special tokens to use instead of (or where missing from) tokenizer_config.json. */
export interface SpecialTokenOverrides {
  readonly bosToken?: string | null;
  readonly eosToken?: string;
  readonly padToken?: string;
}

export class HfTokenizer implements Tokenizer {
  readonly vocabSize: number;
  readonly bosId: number | null;
  readonly eosId: number;
  readonly padId: number;
  readonly unkId: number | null;
  readonly specialTokens: ReadonlyMap<string, number>;
  private readonly lib: HfLibTokenizer;

  /**
   * @param tokenizerJson the parsed tokenizer.json
   * @param tokenizerConfig the parsed tokenizer_config.json ({} when there is none)
   */
  constructor(
    private readonly tokenizerJson: Record<string, unknown>,
    private readonly tokenizerConfig: Record<string, unknown>,
  ) {
    try {
      // Cloned: the library keeps (and may adapt) what it is given; toFiles must write the original.
      this.lib = new HfLibTokenizer(
        withUnicodeDigits(structuredClone(tokenizerJson)),
        structuredClone(tokenizerConfig),
      );
    } catch (cause) {
      throw new ConfigError(TOKENIZER_FILE, `cannot be loaded: ${(cause as Error).message}`, { cause });
    }
    let maxId = -1;
    for (const id of this.lib.get_vocab(true).values()) maxId = Math.max(maxId, id);
    this.vocabSize = maxId + 1;
    const special = (field: string) => {
      const text = specialTokenText(tokenizerConfig[field], field);
      if (text === null) return null;
      const id = this.lib.token_to_id(text);
      if (id === undefined) throw new ConfigError(field, `${JSON.stringify(text)} is not in the vocabulary`);
      return id;
    };
    const eos = special('eos_token');
    if (eos === null) throw new ConfigError('eos_token', `not set in ${TOKENIZER_CONFIG_FILE}; pass eosToken`);
    this.eosId = eos;
    this.bosId = special('bos_token');
    this.padId = special('pad_token') ?? eos;
    const unk = (tokenizerJson.model as { unk_token?: unknown } | undefined)?.unk_token;
    this.unkId = typeof unk === 'string' ? (this.lib.token_to_id(unk) ?? null) : null;
    const added = Array.isArray(tokenizerJson.added_tokens) ? tokenizerJson.added_tokens : [];
    this.specialTokens = new Map(
      added.filter((t) => t?.special === true).map((t) => [String(t.content), Number(t.id)] as const),
    );
  }

  encode(text: string): number[] {
    return this.lib.encode(text, { add_special_tokens: false }).ids;
  }

  /**
   * Decodes without HF's "clean up tokenization spaces" (which would turn " ," into ","), so that
   * decode(encode(text)) === text for byte-level BPE.
   */
  decode(ids: ArrayLike<number>, options: DecodeOptions = {}): string {
    if (ids.length === 0) return '';
    return this.lib.decode(Array.from(ids), {
      skip_special_tokens: options.skipSpecialTokens ?? false,
      clean_up_tokenization_spaces: false,
    });
  }

  tokenToId(token: string): number | undefined {
    return this.lib.token_to_id(token);
  }

  idToToken(id: number): string | undefined {
    return this.lib.id_to_token(id);
  }

  toFiles(): Record<string, string> {
    return {
      [TOKENIZER_FILE]: JSON.stringify(this.tokenizerJson),
      [TOKENIZER_CONFIG_FILE]: `${JSON.stringify(this.tokenizerConfig, null, 2)}\n`,
    };
  }
}

/**
 * The `Digits` pre-tokenizer of the Rust library (what wrote every tokenizer.json) splits on Unicode numbers
 * (`char::is_numeric`: ½, ², ٣ included); the JavaScript library's matches ASCII \d only, so "½" would stay
 * glued to its neighbours and the ids differ (SmolLM2). The same split as a `Split` on \p{N} agrees in both.
 */
function withUnicodeDigits(json: Record<string, unknown>): Record<string, unknown> {
  const fix = (pre: unknown): unknown => {
    if (typeof pre !== 'object' || pre === null) return pre;
    const p = pre as { type?: unknown; individual_digits?: unknown; pretokenizers?: unknown };
    if (p.type === 'Digits') {
      const Regex = p.individual_digits === true ? '\\p{N}' : '\\p{N}+';
      return { type: 'Split', pattern: { Regex }, behavior: 'Isolated', invert: false };
    }
    if (p.type === 'Sequence' && Array.isArray(p.pretokenizers))
      return { ...p, pretokenizers: p.pretokenizers.map(fix) };
    return pre;
  };
  json.pre_tokenizer = fix(json.pre_tokenizer);
  return json;
}

/**
 * Loads an HF tokenizer from its parsed (or textual) tokenizer.json and tokenizer_config.json. Overrides
 * replace the config's special tokens (and are written back by toFiles).
 */
export function loadHfTokenizer(
  tokenizerJson: unknown,
  tokenizerConfig: unknown = {},
  overrides: SpecialTokenOverrides = {},
): HfTokenizer {
  const json = asObject(tokenizerJson, TOKENIZER_FILE);
  const config = { ...asObject(tokenizerConfig, TOKENIZER_CONFIG_FILE) };
  if (overrides.bosToken !== undefined) config.bos_token = overrides.bosToken;
  if (overrides.eosToken !== undefined) config.eos_token = overrides.eosToken;
  if (overrides.padToken !== undefined) config.pad_token = overrides.padToken;
  return new HfTokenizer(json, config);
}

/** tokenizer_config.json writes a special token as a string or as an AddedToken object {content, …}. */
export function specialTokenText(value: unknown, field: string): string | null {
  if (value == null) return null;
  if (typeof value === 'string') return value;
  const content = (value as { content?: unknown }).content;
  if (typeof content === 'string') return content;
  throw new ConfigError(field, `${JSON.stringify(value)} is not a token`);
}

/** Accepts a parsed JSON object or its text. */
export function asObject(value: unknown, field: string): Record<string, unknown> {
  let parsed = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch (cause) {
      throw new ConfigError(field, 'is not valid JSON', { cause });
    }
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new ConfigError(field, 'is not a JSON object');
  return parsed as Record<string, unknown>;
}
