import { StarpoError } from '../errors.ts';
import type { ChatFormat } from './chat-format.ts';
import type { Message, TextTokenizer } from './types.ts';

/**
 * Builds one trajectory's token stream with its loss mask, incrementally, the way a rollout runs:
 *   builder.addSystem(..); builder.addUser(..)          // prompt, mask 0
 *   const prompt = builder.beginResponse()               // + assistant header (mask 0): generate from here
 *   builder.addResponse(generatedIds, stopped)           // what the model wrote: mask 1
 *   builder.addUser(nextObservation)                     // mask 0, and so on
 * The mask is 1 exactly on tokens the model wrote (SPEC §3): never system, user, observation or
 * chat-template tokens. The turn's stop marker is model-written only when the model produced it.
 * Each message is tokenised on its own, so the mask boundaries are exact for any tokenizer.
 * The builder knows nothing about environments: it sees text and token ids.
 */
export interface TokenizedContext {
  ids: number[];
  /** 1 on model-written tokens, 0 elsewhere; same length as ids. */
  mask: number[];
  /** Per assistant turn: index of its last model-written token (−1 if the model wrote nothing). */
  turnEnds: number[];
  /** Tokens before the first assistant token (the first turn's prompt, header included). */
  promptLength: number;
}

export class ContextBuilder {
  private readonly ids: number[] = [];
  private readonly mask: number[] = [];
  private readonly turnEnds: number[] = [];
  private promptLength = -1;
  private responseOpen = false;

  constructor(private readonly tokenizer: TextTokenizer, private readonly chat: ChatFormat) {}

  get length(): number {
    return this.ids.length;
  }

  addSystem(text: string): void {
    this.append(this.chat.system(text), 0);
  }

  addUser(text: string): void {
    this.append(this.chat.user(text), 0);
  }

  /** Opens an assistant turn and returns the whole context so far: the prompt to generate from. */
  beginResponse(): number[] {
    if (this.responseOpen) throw new StarpoError('context: beginResponse() twice without addResponse()');
    this.append(this.chat.assistantStart, 0);
    this.responseOpen = true;
    if (this.promptLength < 0) this.promptLength = this.ids.length;
    return this.ids.slice();
  }

  /**
   * Appends the generated ids (mask 1, or `mask` where a tool turn says which ids the model wrote: 0 on
   * tool results). `stopped`: the ids end with the stop marker the model wrote; otherwise (cut at the
   * length limit) the stop is appended as template (mask 0).
   */
  addResponse(ids: readonly number[], stopped: boolean, mask?: readonly number[]): void {
    if (!this.responseOpen) throw new StarpoError('context: addResponse() without beginResponse()');
    if (mask && mask.length !== ids.length) throw new StarpoError(`context: ${mask.length} mask values for ${ids.length} ids`);
    ids.forEach((id, i) => {
      this.ids.push(id);
      this.mask.push(mask ? (mask[i] as number) : 1);
    });
    this.turnEnds.push(ids.length > 0 ? this.ids.length - 1 : -1);
    this.responseOpen = false;
    this.append(stopped ? this.chat.afterStop : this.chat.stop + this.chat.afterStop, 0);
  }

  /** A response given as text (expert data, replays). `trainStop`: count the stop marker as model-written. */
  addResponseText(text: string, trainStop = false): void {
    this.addResponse(this.encode(trainStop ? text + this.chat.stop : text), trainStop);
  }

  addMessage(message: Message, trainStop = false): void {
    if (message.role === 'system') this.addSystem(message.content);
    else if (message.role === 'user') this.addUser(message.content);
    else {
      this.beginResponse();
      this.addResponseText(message.content, trainStop);
    }
  }

  build(): TokenizedContext {
    if (this.responseOpen) throw new StarpoError('context: build() inside an open assistant turn');
    return {
      ids: this.ids.slice(),
      mask: this.mask.slice(),
      turnEnds: this.turnEnds.slice(),
      promptLength: this.promptLength < 0 ? this.ids.length : this.promptLength,
    };
  }

  private append(text: string, maskValue: 0 | 1): void {
    if (this.responseOpen) throw new StarpoError('context: a message inside an open assistant turn');
    for (const id of this.encode(text)) {
      this.ids.push(id);
      this.mask.push(maskValue);
    }
  }

  private encode(text: string): number[] {
    return text ? this.tokenizer.encode(text) : [];
  }
}

/** A whole conversation at once; equal to feeding the same messages through a ContextBuilder. */
export function tokenizeMessages(
  messages: readonly Message[], tokenizer: TextTokenizer, chat: ChatFormat, trainStop = false,
): TokenizedContext {
  const builder = new ContextBuilder(tokenizer, chat);
  for (const message of messages) builder.addMessage(message, trainStop);
  return builder.build();
}
