/**
 * A ChatFormat from a model's own Jinja chat template (see chat-format.ts for the token-in/token-out model).
 * The opening is the template's rendering of the first messages; what follows an assistant turn is found by
 * rendering a conversation with a marker as the assistant's content and taking the text after the marker —
 * the turn's close, the next messages and header, exactly as the template writes them after any assistant
 * turn. (Re-rendering the whole conversation instead would not even be stable: Qwen3's template drops the
 * reasoning of assistant turns before the last user message, so earlier turns would change under the tokens
 * the model was trained on.) The stop is the eos token the template closes assistant turns with.
 */
import { ConfigError, StarpoError } from '../errors.ts';
import type { ChatFormat, ChatTurnMessage, Piece, TokenRole } from './chat-format.ts';
import { nonEmpty } from './chat-format.ts';
import type { ChatMessage, ChatTemplate, RenderOptions } from './chat-template.ts';
import type { TextTokenizer } from './types.ts';

/** Content no template transforms (no whitespace to trim, no think tags to split on). */
const MARK = '@@starpo-assistant-turn@@';
const PROBE_USER = { role: 'user', content: 'u' } as const;

export interface JinjaFormatOptions {
  readonly name: string;
  readonly template: ChatTemplate;
  readonly tokenizer: TextTokenizer;
  /** Ids that end generation (generation_config.json, config.json and the tokenizer's eos). */
  readonly eosTokenIds: readonly number[];
  /** Qwen3's enable_thinking; undefined = the template's default. */
  readonly enableThinking?: boolean;
}

export function jinjaChatFormat(o: JinjaFormatOptions): ChatFormat {
  const render = (messages: readonly ChatTurnMessage[], header: boolean) =>
    o.template.render(
      messages.map(({ role, content }) => ({ role, content })),
      { addGenerationPrompt: header, enableThinking: o.enableThinking },
    );
  const afterTurn = (messages: readonly ChatTurnMessage[], header: boolean): string =>
    textAfterAssistantTurn(
      o.template,
      messages.map(({ role, content }) => ({ role, content })),
      { addGenerationPrompt: header, enableThinking: o.enableThinking },
      o.name,
    );
  const stop = closingStop(afterTurn([{ role: 'user', content: 'v' }], false), o);
  return {
    name: o.name,
    stop,
    stopTokenIds: [...o.eosTokenIds],
    opening: (messages, header) => labelRendered(render(messages, header), messages),
    continuation(messages, wroteStop, header) {
      return labelRendered(stripStop(afterTurn(messages, header), stop, wroteStop, o.name), messages);
    },
    jinja: { template: o.template, enableThinking: o.enableThinking },
  };
}

/**
 * What a template writes after an assistant turn, whatever the turn held: its close, then `messages`, then the
 * next header when `options.addGenerationPrompt` — found by rendering a marker as the assistant's content.
 */
export function textAfterAssistantTurn(
  template: ChatTemplate,
  messages: readonly ChatMessage[],
  options: RenderOptions,
  name: string,
): string {
  const text = template.render([PROBE_USER, { role: 'assistant', content: MARK }, ...messages], options);
  const at = text.lastIndexOf(MARK);
  if (at < 0) throw new StarpoError(`chat template ${name}: an assistant message's content is not rendered verbatim`);
  return text.slice(at + MARK.length);
}

/**
 * The text after an assistant turn less its stop when the model wrote it (the stop is then among the sampled tokens).
 */
export function stripStop(tail: string, stop: string, wroteStop: boolean, name: string): string {
  if (!tail.startsWith(stop)) {
    throw new StarpoError(`chat template ${name}: an assistant turn no longer closes with ${stop}`);
  }
  return wroteStop ? tail.slice(stop.length) : tail;
}

/** The eos token text an assistant turn's close starts with. */
export function closingStop(close: string, o: Pick<JinjaFormatOptions, 'tokenizer' | 'eosTokenIds'>): string {
  const first = o.tokenizer.encode(close)[0];
  const text = first === undefined ? '' : o.tokenizer.decode([first]);
  if (first === undefined || !o.eosTokenIds.includes(first) || !close.startsWith(text)) {
    throw new ConfigError(
      'chat_template',
      `assistant turns end with ${JSON.stringify(close.slice(0, 24))}, which does not start ` +
        `with an eos token (${o.eosTokenIds.join(', ') || 'none'}; see generation_config.json eos_token_id)`,
    );
  }
  return text;
}

/**
 * Splits rendered text into the messages' contents (found in order; a template may trim them) and the
 * template text around them.
 */
export function labelRendered(text: string, messages: readonly ChatTurnMessage[]): Piece[] {
  const pieces: Piece[] = [];
  let at = 0;
  for (const m of messages) {
    const role: TokenRole = m.owner ?? (m.role === 'system' ? 'system' : m.role === 'assistant' ? 'assistant' : 'user');
    for (const content of [m.content, m.content.trim()]) {
      const found = content ? text.indexOf(content, at) : -1;
      if (found < 0) continue;
      pieces.push({ text: text.slice(at, found), role: 'template' }, { text: content, role });
      at = found + content.length;
      break;
    }
  }
  pieces.push({ text: text.slice(at), role: 'template' });
  return nonEmpty(pieces);
}
