import { StarpoError } from '../errors.ts';
import { type ChatFormat, type ChatTurnMessage, roleCode } from './chat-format.ts';
import { type LabelledIds, tokenizePieces } from './tokenize-pieces.ts';
import type { Message, TextTokenizer } from './types.ts';

/**
 * Builds one trajectory's token stream with its loss mask, incrementally, the way a rollout runs:
 *   builder.addSystem(..); builder.addUser(..)          // prompt, mask 0
 *   const prompt = builder.beginResponse()               // + assistant header (mask 0): generate from here
 *   builder.addResponse(generatedIds, wroteStop)         // what the model wrote: mask 1
 *   builder.addUser(nextObservation, 'observation')      // mask 0, and so on
 * The mask is 1 exactly on tokens the model wrote (docs/spec.md §3): never system, user, observation or
 * chat-template tokens. The turn's stop marker is model-written only when the model produced it.
 * Token-in, token-out: the generated ids are appended as they are, and the chat format renders only
 * what comes between them (see chat-format.ts), so nothing the model sampled is ever re-tokenised.
 * Every token also records its owner (TOKEN_ROLES), for the mask audit.
 * The builder knows nothing about environments: it sees text and token ids.
 */
export interface TokenizedContext {
  ids: number[];
  /** 1 on model-written tokens, 0 elsewhere; same length as ids. */
  mask: number[];
  /** roleCode of each token's owner (template, system, user, observation, assistant, tool). */
  roles: number[];
  /** Per assistant turn: index of its last model-written token (−1 if the model wrote nothing). */
  turnEnds: number[];
  /** Tokens before the first assistant token (the first turn's prompt, header included). */
  promptLength: number;
}

export class ContextBuilder {
  private readonly ids: number[] = [];
  private readonly mask: number[] = [];
  private readonly roles: number[] = [];
  private readonly turnEnds: number[] = [];
  private promptLength = -1;
  private responseOpen = false;
  /** Messages not yet rendered: rendered together at the next assistant header (or at build). */
  private pending: ChatTurnMessage[] = [];
  /** The last turn's close has not been rendered yet (it opens the next continuation). */
  private closePending = false;
  private lastWroteStop = false;
  private estimate: { header: boolean; pending: number; tokens: LabelledIds } | null = null;

  constructor(
    private readonly tokenizer: TextTokenizer,
    private readonly chat: ChatFormat,
  ) {}

  /** Tokens so far, counting the pending messages and the assistant header they would open with. */
  get length(): number {
    return this.ids.length + (this.pending.length > 0 || this.closePending ? this.render(true).ids.length : 0);
  }

  addSystem(text: string): void {
    this.queue({ role: 'system', content: text });
  }

  /** A user message; `owner` 'observation' marks an environment's reply (the mask audit's distinction). */
  addUser(text: string, owner: 'user' | 'observation' = 'user'): void {
    this.queue({ role: 'user', content: text, owner });
  }

  /** Opens an assistant turn and returns the whole context so far: the prompt to generate from. */
  beginResponse(): number[] {
    if (this.responseOpen) throw new StarpoError('context: beginResponse() twice without addResponse()');
    this.flush(true);
    this.responseOpen = true;
    if (this.promptLength < 0) this.promptLength = this.ids.length;
    return this.ids.slice();
  }

  /**
   * Appends the generated ids (mask 1, or `mask` where a tool turn says which ids the model wrote: 0 on
   * tool results). `wroteStop`: the ids end with the chat format's stop, written by the model; otherwise
   * (cut at the length limit, or another eos) the stop is appended as template (mask 0).
   */
  addResponse(ids: readonly number[], wroteStop: boolean, mask?: readonly number[]): void {
    if (!this.responseOpen) throw new StarpoError('context: addResponse() without beginResponse()');
    if (mask && mask.length !== ids.length)
      throw new StarpoError(`context: ${mask.length} mask values for ${ids.length} ids`);
    ids.forEach((id, i) => {
      const trained = mask ? (mask[i] as number) : 1;
      this.ids.push(id);
      this.mask.push(trained);
      this.roles.push(roleCode(trained ? 'assistant' : 'tool'));
    });
    this.turnEnds.push(ids.length > 0 ? this.ids.length - 1 : -1);
    this.responseOpen = false;
    this.closePending = true;
    this.lastWroteStop = wroteStop;
  }

  /** A response given as text (expert data, replays). `trainStop`: count the stop marker as model-written. */
  addResponseText(text: string, trainStop = false): void {
    this.addResponse(this.encode(trainStop ? text + this.chat.stop : text), trainStop);
  }

  addMessage(message: Message, trainStop = false): void {
    if (message.role === 'system') this.addSystem(message.content);
    else if (message.role === 'user') this.addUser(message.content, this.turnEnds.length > 0 ? 'observation' : 'user');
    else {
      this.beginResponse();
      this.addResponseText(message.content, trainStop);
    }
  }

  build(): TokenizedContext {
    if (this.responseOpen) throw new StarpoError('context: build() inside an open assistant turn');
    this.flush(false);
    return {
      ids: this.ids.slice(),
      mask: this.mask.slice(),
      roles: this.roles.slice(),
      turnEnds: this.turnEnds.slice(),
      promptLength: this.promptLength < 0 ? this.ids.length : this.promptLength,
    };
  }

  private queue(message: ChatTurnMessage): void {
    if (this.responseOpen) throw new StarpoError('context: a message inside an open assistant turn');
    this.pending.push(message);
  }

  /** The pending messages' tokens: the opening before any assistant turn, else the last turn's continuation. */
  private render(header: boolean): LabelledIds {
    const e = this.estimate;
    if (e && e.header === header && e.pending === this.pending.length) return e.tokens;
    const pieces =
      this.turnEnds.length === 0
        ? this.chat.opening(this.pending, header)
        : this.chat.continuation(this.pending, this.lastWroteStop, header);
    const tokens = tokenizePieces(this.tokenizer, pieces);
    this.estimate = { header, pending: this.pending.length, tokens };
    return tokens;
  }

  private flush(header: boolean): void {
    if (this.pending.length === 0 && !this.closePending && !(header && this.turnEnds.length === 0)) return;
    const { ids, roles } = this.render(header);
    for (let i = 0; i < ids.length; i++) {
      this.ids.push(ids[i] as number);
      this.mask.push(0);
      this.roles.push(roles[i] as number);
    }
    this.pending = [];
    this.closePending = false;
    this.estimate = null;
  }

  private encode(text: string): number[] {
    return text ? this.tokenizer.encode(text) : [];
  }
}

/** A whole conversation at once; equal to feeding the same messages through a ContextBuilder. */
export function tokenizeMessages(
  messages: readonly Message[],
  tokenizer: TextTokenizer,
  chat: ChatFormat,
  trainStop = false,
): TokenizedContext {
  const builder = new ContextBuilder(tokenizer, chat);
  for (const message of messages) builder.addMessage(message, trainStop);
  return builder.build();
}
