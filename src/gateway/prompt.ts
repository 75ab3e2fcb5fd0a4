/**
 * The tokens of a gateway call's prompt, through the model's own chat template (the run's ChatFormat `jinja`,
 * rendered by @huggingface/jinja as transformers' apply_chat_template renders it) and tokenised with each
 * token's owner (agent/tokenize-pieces.ts). Two cases, as in a rollout:
 * - opening: the whole conversation, tools included, then the assistant header — a call that continues no
 *   earlier call of its episode;
 * - continuation: what the template writes after an assistant turn the gateway served (its close, less the
 *   stop when the model wrote it; the new tool results and user messages; the next header), appended to that
 *   turn's recorded tokens, so the model's earlier output is never re-tokenised (token-in/token-out).
 * Content owners: system → system, user → user, tool → tool, and assistant text the client supplied → user
 * (it is the client's text: the model did not sample it here); template text → template.
 */
import type { ChatFormat, ChatTurnMessage, TokenRole } from '../agent/chat-format.ts';
import type { RenderOptions } from '../agent/chat-template.ts';
import { labelRendered, stripStop, textAfterAssistantTurn } from '../agent/jinja-format.ts';
import { type LabelledIds, tokenizePieces } from '../agent/tokenize-pieces.ts';
import type { TextTokenizer } from '../agent/types.ts';
import { ConfigError } from '../errors.ts';
import type { GatewayMessage } from './request.ts';

export interface GatewayChat {
  /** The text of the token that ends an assistant turn (Qwen: <|im_end|>). */
  readonly stop: string;
  /** Ids that end generation (the model's eos ids). */
  readonly stopTokenIds: readonly number[];
  opening(messages: readonly GatewayMessage[], tools: readonly unknown[]): LabelledIds;
  continuation(messages: readonly GatewayMessage[], wroteStop: boolean, tools: readonly unknown[]): LabelledIds;
}

const OWNERS: Record<GatewayMessage['role'], TokenRole> = {
  system: 'system',
  user: 'user',
  tool: 'tool',
  assistant: 'user',
};

/** The messages as labelRendered reads them: each content with its owner. */
const owned = (messages: readonly GatewayMessage[]): ChatTurnMessage[] =>
  messages.map((m) => ({ role: 'user', content: m.content, owner: OWNERS[m.role] }));

export function gatewayChat(chat: ChatFormat, tokenizer: TextTokenizer): GatewayChat {
  const jinja = chat.jinja;
  if (!jinja) {
    throw new ConfigError(
      'model',
      "the gateway renders with the model's own chat template, and this model has none " +
        '(tokenizer_config.json chat_template or chat_template.jinja)',
    );
  }
  const options = (tools: readonly unknown[]): RenderOptions => ({
    addGenerationPrompt: true,
    enableThinking: jinja.enableThinking,
    ...(tools.length > 0 ? { tools } : {}),
  });
  return {
    stop: chat.stop,
    stopTokenIds: chat.stopTokenIds,
    opening(messages, tools) {
      const text = jinja.template.render(messages, options(tools));
      return tokenizePieces(tokenizer, labelRendered(text, owned(messages)));
    },
    continuation(messages, wroteStop, tools) {
      const tail = textAfterAssistantTurn(jinja.template, messages, options(tools), chat.name);
      return tokenizePieces(
        tokenizer,
        labelRendered(stripStop(tail, chat.stop, wroteStop, chat.name), owned(messages)),
      );
    },
  };
}
