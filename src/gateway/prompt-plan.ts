/**
 * A call's prompt tokens, token-in/token-out. When the request's messages repeat an earlier call's conversation
 * (its messages, then the reply the gateway returned) and render the same tools, the prompt is that call's
 * recorded prompt and sampled tokens plus only what the template writes after them — the model's output is never
 * re-tokenised, so the tokens trained are the tokens sampled. Otherwise the whole conversation is rendered anew;
 * when that is because the client sent back a reply other than the one the model wrote (edited, reformatted,
 * truncated), the call is flagged `diverged`.
 * Messages compare by role, name, content and tool calls (name and parsed arguments; call ids are not compared,
 * and this template never renders them).
 */
import { isDeepStrictEqual } from 'node:util';
import { roleCode } from '../agent/chat-format.ts';
import type { CallRecord, Episode } from './episodes.ts';
import type { GatewayChat } from './prompt.ts';
import { plainNumbers } from '../agent/template-numbers.ts';
import type { GatewayMessage, ToolCallIn } from './request.ts';

export interface PromptPlan {
  readonly ids: number[];
  readonly roles: number[];
  readonly parent: number | null;
  readonly diverged: boolean;
}

const ASSISTANT = roleCode('assistant');

function parsedArguments(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function sameCalls(a: readonly ToolCallIn[] = [], b: readonly ToolCallIn[] = []): boolean {
  const args = ({ function: { arguments: x } }: ToolCallIn) =>
    typeof x === 'string' ? parsedArguments(x) : plainNumbers(x);
  return (
    a.length === b.length &&
    a.every((x, i) => x.function.name === b[i].function.name && isDeepStrictEqual(args(x), args(b[i])))
  );
}

export function sameMessage(a: GatewayMessage, b: GatewayMessage): boolean {
  return (
    a.role === b.role &&
    a.content === b.content &&
    (a.name ?? '') === (b.name ?? '') &&
    sameCalls(a.tool_calls, b.tool_calls)
  );
}

const startsWith = (messages: readonly GatewayMessage[], prefix: readonly GatewayMessage[]): boolean =>
  prefix.length <= messages.length && prefix.every((m, i) => sameMessage(m, messages[i]));

/** The call this request continues: the longest conversation it repeats, the latest on a tie. */
function parentOf(
  calls: readonly CallRecord[],
  messages: readonly GatewayMessage[],
  toolsKey: string,
): CallRecord | null {
  let best: CallRecord | null = null;
  for (const c of calls) {
    if (c.toolsKey !== toolsKey || !startsWith(messages, c.conversation)) continue;
    if (!best || c.conversation.length >= best.conversation.length) best = c;
  }
  return best;
}

/** The request repeats an earlier call's messages but carries another reply than the model wrote. */
function divergesFrom(calls: readonly CallRecord[], messages: readonly GatewayMessage[]): boolean {
  return calls.some((c) => {
    const asked = c.conversation.length - 1;
    const reply = messages[asked];
    return (
      reply?.role === 'assistant' &&
      startsWith(messages, c.conversation.slice(0, asked)) &&
      !sameMessage(reply, c.conversation[asked])
    );
  });
}

export function planPrompt(
  episode: Episode,
  messages: readonly GatewayMessage[],
  tools: readonly unknown[],
  chat: GatewayChat,
): PromptPlan {
  const toolsKey = JSON.stringify(tools);
  const parent = parentOf(episode.calls, messages, toolsKey);
  if (!parent) {
    const { ids, roles } = chat.opening(messages, tools);
    return { ids, roles, parent: null, diverged: divergesFrom(episode.calls, messages) };
  }
  const next = chat.continuation(messages.slice(parent.conversation.length), parent.wroteStop, tools);
  return {
    ids: [...parent.promptIds, ...parent.sampled, ...next.ids],
    roles: [...parent.promptRoles, ...parent.sampled.map(() => ASSISTANT), ...next.roles],
    parent: parent.ordinal,
    diverged: false,
  };
}
