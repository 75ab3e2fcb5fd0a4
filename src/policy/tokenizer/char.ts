/**
 * A character-level tokenizer for tiny models trained from scratch: one id per character of an explicit
 * alphabet, plus whole-token ids for control tokens (<pad>, <eos>, …) and protocol tokens (<think>, </answer>,
 * ||, …) so a small model learns the agent protocol as single symbols instead of spelling it out.
 *
 * Encoding scans left to right and, at each position, takes the longest multi-character token that starts
 * there (as HF matches added tokens), else the character, else <unk>. It is saved as an HF tokenizer.json
 * (WordLevel model, a pre-tokenizer that isolates every character, Fuse decoder), so HF tools load it too.
 */
import { ConfigError, StarpoError } from '../../errors.ts';
import type { DecodeOptions, Tokenizer } from './types.ts';
import { TOKENIZER_CONFIG_FILE, TOKENIZER_FILE } from './types.ts';

export interface CharTokenizerSpec {
  /** The alphabet: a string (each code point one token) or a list of single characters. */
  readonly characters: string | readonly string[];
  /** Multi-character tokens matched whole, e.g. ['<think>', '</think>', '<answer>', '</answer>', '||']. */
  readonly tokens?: readonly string[];
  readonly pad?: string;
  readonly eos?: string;
  /** No BOS by default: prompts start with whatever the chat template puts first. */
  readonly bos?: string | null;
  readonly unk?: string;
}

/** The layout a CharTokenizer is built from: token text by id, and which tokens are control tokens. */
export interface CharVocab {
  readonly tokens: readonly string[];
  readonly pad: string;
  readonly eos: string;
  readonly bos: string | null;
  readonly unk: string;
}

/** The pre-tokenizer regex that makes HF split text into single characters ([\s\S]: any, newlines included). */
export const CHAR_SPLIT_REGEX = '[\\s\\S]';

/** Builds the vocabulary: control tokens, then protocol tokens, then characters, in the order given. */
export function createCharTokenizer(spec: CharTokenizerSpec): CharTokenizer {
  const pad = spec.pad ?? '<pad>';
  const eos = spec.eos ?? '<eos>';
  const bos = spec.bos ?? null;
  const unk = spec.unk ?? '<unk>';
  const chars = typeof spec.characters === 'string' ? Array.from(spec.characters) : [...spec.characters];
  for (const c of chars) {
    if (Array.from(c).length !== 1)
      throw new ConfigError('tokenizer.characters', `${JSON.stringify(c)} is not one character`);
  }
  const controls = [pad, eos, ...(bos === null ? [] : [bos]), unk];
  for (const t of [...controls, ...(spec.tokens ?? [])]) {
    if (t.length === 0) throw new ConfigError('tokenizer.tokens', 'a token cannot be empty');
  }
  return new CharTokenizer({ tokens: [...controls, ...(spec.tokens ?? []), ...chars], pad, eos, bos, unk });
}

export class CharTokenizer implements Tokenizer {
  readonly vocabSize: number;
  readonly bosId: number | null;
  readonly eosId: number;
  readonly padId: number;
  readonly unkId: number;
  readonly specialTokens: ReadonlyMap<string, number>;
  private readonly ids = new Map<string, number>();
  /** Code point → id for single characters. */
  private readonly charIds = new Map<number, number>();
  /** First UTF-16 unit → multi-character tokens starting with it, longest first. */
  private readonly wholeTokens = new Map<number, string[]>();
  /** Ids of the control and multi-character tokens (HF's added_tokens). */
  private readonly addedIds = new Set<number>();

  constructor(readonly vocab: CharVocab) {
    vocab.tokens.forEach((token, id) => {
      if (this.ids.has(token)) throw new ConfigError('tokenizer.tokens', `${JSON.stringify(token)} appears twice`);
      this.ids.set(token, id);
    });
    const id = (token: string, field: string) => {
      const found = this.ids.get(token);
      if (found === undefined) throw new ConfigError(field, `${JSON.stringify(token)} is not in the vocabulary`);
      return found;
    };
    this.vocabSize = vocab.tokens.length;
    this.padId = id(vocab.pad, 'pad_token');
    this.eosId = id(vocab.eos, 'eos_token');
    this.bosId = vocab.bos === null ? null : id(vocab.bos, 'bos_token');
    this.unkId = id(vocab.unk, 'unk_token');
    const controls = [vocab.pad, vocab.eos, vocab.bos, vocab.unk].filter((t): t is string => t !== null);
    this.specialTokens = new Map(controls.map((t) => [t, this.ids.get(t)!]));
    for (const [token, tokenId] of this.ids) {
      const isChar = Array.from(token).length === 1 && !this.specialTokens.has(token);
      if (isChar) this.charIds.set(token.codePointAt(0)!, tokenId);
      else {
        this.addedIds.add(tokenId);
        this.wholeTokens.set(token.charCodeAt(0), [...(this.wholeTokens.get(token.charCodeAt(0)) ?? []), token]);
      }
    }
    for (const list of this.wholeTokens.values()) list.sort((a, b) => b.length - a.length);
  }

  encode(text: string): number[] {
    const out: number[] = [];
    let i = 0;
    while (i < text.length) {
      const whole = this.matchWhole(text, i);
      if (whole !== undefined) {
        out.push(this.ids.get(whole)!);
        i += whole.length;
        continue;
      }
      const cp = text.codePointAt(i)!;
      out.push(this.charIds.get(cp) ?? this.unkId);
      i += cp > 0xffff ? 2 : 1;
    }
    return out;
  }

  private matchWhole(text: string, i: number): string | undefined {
    const candidates = this.wholeTokens.get(text.charCodeAt(i));
    if (candidates === undefined) return undefined;
    return candidates.find((t) => text.startsWith(t, i));
  }

  decode(ids: ArrayLike<number>, options: DecodeOptions = {}): string {
    let out = '';
    for (let i = 0; i < ids.length; i++) {
      const token = this.vocab.tokens[ids[i]];
      if (token === undefined)
        throw new StarpoError(`token id ${ids[i]} is outside the vocabulary of ${this.vocabSize}`);
      if (!(options.skipSpecialTokens && this.specialTokens.has(token))) out += token;
    }
    return out;
  }

  tokenToId(token: string): number | undefined {
    return this.ids.get(token);
  }

  idToToken(id: number): string | undefined {
    return this.vocab.tokens[id];
  }

  toFiles(): Record<string, string> {
    const { tokens, pad, eos, bos, unk } = this.vocab;
    const added = tokens
      .map((content, id) => ({ content, id }))
      .filter(({ id }) => this.addedIds.has(id))
      .map(({ content, id }) => ({
        id,
        content,
        single_word: false,
        lstrip: false,
        rstrip: false,
        normalized: false,
        special: this.specialTokens.has(content),
      }));
    const tokenizer = {
      version: '1.0',
      truncation: null,
      padding: null,
      added_tokens: added,
      normalizer: null,
      pre_tokenizer: { type: 'Split', pattern: { Regex: CHAR_SPLIT_REGEX }, behavior: 'Isolated', invert: false },
      post_processor: null,
      decoder: { type: 'Fuse' },
      model: { type: 'WordLevel', vocab: Object.fromEntries(tokens.map((t, id) => [t, id])), unk_token: unk },
    };
    const config = {
      tokenizer_class: 'PreTrainedTokenizerFast',
      bos_token: bos,
      eos_token: eos,
      pad_token: pad,
      unk_token: unk,
      clean_up_tokenization_spaces: false,
    };
    return {
      [TOKENIZER_FILE]: `${JSON.stringify(tokenizer, null, 2)}\n`,
      [TOKENIZER_CONFIG_FILE]: `${JSON.stringify(config, null, 2)}\n`,
    };
  }
}
