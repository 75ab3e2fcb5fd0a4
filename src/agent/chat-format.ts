/**
 * How messages are wrapped into one token stream: a model's chat template, seen the way a rollout grows a
 * conversation (token-in, token-out). The opening (system and first user message, then the assistant header)
 * is rendered as a whole, exactly as transformers' apply_chat_template renders it; after each assistant turn
 * only what follows it is rendered — the turn's close, the next messages, the next header — and appended to
 * the tokens already there, so the tokens the model sampled are never re-tokenised or re-rendered.
 *
 * Every piece of text says whose it is (TokenRole), which is what the loss mask and the mask audit read.
 * Everything here is mask 0, never trained, except `stop` when the model itself wrote it.
 */
import type { ChatTemplate } from './chat-template.ts';
import type { Message } from './types.ts';

/** Who a token belongs to. Only 'assistant' tokens (what the model wrote) carry loss. */
export const TOKEN_ROLES = ['template', 'system', 'user', 'observation', 'assistant', 'tool'] as const;
export type TokenRole = (typeof TOKEN_ROLES)[number];
/** The role's code in trajectory events (its index in TOKEN_ROLES). */
export const roleCode = (role: TokenRole): number => TOKEN_ROLES.indexOf(role);

/** A span of text and its owner. */
export interface Piece {
  readonly text: string;
  readonly role: TokenRole;
}

/** A message to wrap, with the owner its content gets ('observation' for an environment's reply). */
export interface ChatTurnMessage extends Message {
  readonly owner?: TokenRole;
}

export interface ChatFormat {
  readonly name: string;
  /** What the model writes to end its turn: a generation stop, model-written when the model wrote it. */
  readonly stop: string;
  /** Token ids that end a turn (the model's eos ids); empty when turns end at the `stop` text. */
  readonly stopTokenIds: readonly number[];
  /** The conversation's opening: the messages, then the first assistant header when `header`. */
  opening(messages: readonly ChatTurnMessage[], header: boolean): Piece[];
  /**
   * What follows an assistant turn: its close (without `stop` when the model wrote it), the messages, then the
   * next assistant header when `header`.
   */
  continuation(messages: readonly ChatTurnMessage[], wroteStop: boolean, header: boolean): Piece[];
  /**
   * The model's own Jinja template behind this format (absent for the written-out formats): what renders
   * messages the rollout's turns do not have (tools, tool calls and results) for the OpenAI gateway.
   */
  readonly jinja?: { readonly template: ChatTemplate; readonly enableThinking?: boolean };
}

/** A format whose messages are fixed strings around the content (the hand-written ChatML and compact). */
interface StringFormatSpec {
  readonly name: string;
  readonly wrap: Readonly<Record<'system' | 'user', readonly [before: string, after: string]>>;
  /** An empty system message writes nothing. */
  readonly dropEmptySystem: boolean;
  readonly assistantStart: string;
  readonly stop: string;
  /** Template text after the stop, before the next message. */
  readonly afterStop: string;
}

function stringFormat(spec: StringFormatSpec): ChatFormat {
  const messages = (list: readonly ChatTurnMessage[]): Piece[] =>
    list.flatMap((m): Piece[] => {
      if (m.role === 'assistant') throw new Error(`${spec.name}: assistant messages are written by the model`);
      if (m.role === 'system' && spec.dropEmptySystem && m.content === '') return [];
      const [before, after] = spec.wrap[m.role];
      return [
        { text: before, role: 'template' },
        { text: m.content, role: m.owner ?? m.role },
        { text: after, role: 'template' },
      ];
    });
  const header = (on: boolean): Piece[] => (on ? [{ text: spec.assistantStart, role: 'template' }] : []);
  return {
    name: spec.name,
    stop: spec.stop,
    stopTokenIds: [],
    opening: (list, on) => nonEmpty([...messages(list), ...header(on)]),
    continuation: (list, wroteStop, on) =>
      nonEmpty([
        { text: (wroteStop ? '' : spec.stop) + spec.afterStop, role: 'template' },
        ...messages(list),
        ...header(on),
      ]),
  };
}

export function nonEmpty(pieces: Piece[]): Piece[] {
  return pieces.filter((p) => p.text.length > 0);
}

/**
 * Qwen2.5's ChatML template written out, the fallback for a model directory without a template of its own
 * (and the full prompt template's wrapping for models without one). The model ends its turn with
 * <|im_end|>; the newline after it is template.
 */
export const CHATML: ChatFormat = stringFormat({
  name: 'chatml',
  wrap: { system: ['<|im_start|>system\n', '<|im_end|>\n'], user: ['<|im_start|>user\n', '<|im_end|>\n'] },
  dropEmptySystem: false,
  assistantStart: '<|im_start|>assistant\n',
  stop: '<|im_end|>',
  afterStop: '\n',
});

/**
 * The compact template's wrapping for tiny character-level models: a user message is its text and
 * a newline, an assistant turn is ">" then the answer, ended by a newline the model writes.
 */
export const COMPACT_CHAT: ChatFormat = stringFormat({
  name: 'compact',
  wrap: { system: ['', '\n'], user: ['', '\n'] },
  dropEmptySystem: true,
  assistantStart: '>',
  stop: '\n',
  afterStop: '',
});

export const CHAT_FORMATS: Record<string, ChatFormat> = { chatml: CHATML, compact: COMPACT_CHAT };
