/**
 * How messages are wrapped into one token stream (a model's chat template). Everything here is
 * template text, never trained, except `stop` when the model itself wrote it.
 */
export interface ChatFormat {
  readonly name: string;
  /** Wrapped system message; a format may drop system messages ('' result). */
  system(text: string): string;
  user(text: string): string;
  /** Opens an assistant turn; generation starts right after it. */
  readonly assistantStart: string;
  /** What the model writes to end its turn; generation stops on it. */
  readonly stop: string;
  /** Template text after the stop, before the next message. */
  readonly afterStop: string;
}

/** Qwen2.5's ChatML template. The model ends its turn with <|im_end|>; the newline after it is template. */
export const CHATML: ChatFormat = {
  name: 'chatml',
  system: (text) => `<|im_start|>system\n${text}<|im_end|>\n`,
  user: (text) => `<|im_start|>user\n${text}<|im_end|>\n`,
  assistantStart: '<|im_start|>assistant\n',
  stop: '<|im_end|>',
  afterStop: '\n',
};

/**
 * The compact template's wrapping for tiny character-level models: a user message is its text and
 * a newline, an assistant turn is ">" then the answer, ended by a newline the model writes.
 */
export const COMPACT_CHAT: ChatFormat = {
  name: 'compact',
  system: (text) => (text ? `${text}\n` : ''),
  user: (text) => `${text}\n`,
  assistantStart: '>',
  stop: '\n',
  afterStop: '',
};

export const CHAT_FORMATS: Record<string, ChatFormat> = { chatml: CHATML, compact: COMPACT_CHAT };
