/**
 * What the rest of starpo needs from a tokenizer, whichever kind: the built-in character-level one for models
 * trained from scratch (char.ts) or a Hugging Face tokenizer.json (hf.ts). Both serialise to HF's
 * tokenizer.json + tokenizer_config.json pair, which load.ts reads back.
 */
export interface DecodeOptions {
  /** Drop control tokens (pad, eos, bos, unk and other tokens marked special). Default false. */
  readonly skipSpecialTokens?: boolean;
}

export interface Tokenizer {
  /** Ids run 0 … vocabSize-1 (the model's embedding may be larger; never smaller). */
  readonly vocabSize: number;
  readonly bosId: number | null;
  readonly eosId: number;
  /** Defaults to eosId when the tokenizer defines no pad token. */
  readonly padId: number;
  readonly unkId: number | null;
  /** Control tokens (HF `special: true`) by their text. */
  readonly specialTokens: ReadonlyMap<string, number>;
  /** Text → ids. Adds no BOS/EOS: prompts are assembled explicitly by the caller. */
  encode(text: string): number[];
  decode(ids: ArrayLike<number>, options?: DecodeOptions): string;
  tokenToId(token: string): number | undefined;
  idToToken(id: number): string | undefined;
  /** File name → contents (tokenizer.json, tokenizer_config.json), for checkpoints. */
  toFiles(): Record<string, string>;
}

export const TOKENIZER_FILE = 'tokenizer.json';
export const TOKENIZER_CONFIG_FILE = 'tokenizer_config.json';
