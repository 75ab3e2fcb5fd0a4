/**
 * Serving one chat completion, independent of HTTP: plan the prompt tokens (prompt-plan.ts), generate through
 * the batcher, turn what the model wrote into the reply (content and tool calls) and record the call on its
 * episode. `tool_choice` "none" renders no tools and parses no calls; "required" and a named function start the
 * reply with the opening of a call (`<tool_call>\n`, and `{"name": "<fn>", "arguments": ` for a named one), given
 * as template tokens after the assistant header, so the model writes the rest of a call (Qwen's Hermes-style
 * format, the one the reply is parsed in). The forced text is the template's, never trained (loss 0).
 */
import { roleCode } from '../agent/chat-format.ts';
import type { TextTokenizer } from '../agent/types.ts';
import { log } from '../log.ts';
import type { Generated, GenerationBatcher } from './batcher.ts';
import type { CallRecord, Episode, FinishReason } from './episodes.ts';
import type { GatewayChat } from './prompt.ts';
import { planPrompt } from './prompt-plan.ts';
import { type ChatRequest, type GatewayMessage, RequestError, type ToolCallOut } from './request.ts';
import { StreamedText } from './stream-text.ts';
import { parseToolCalls } from './tool-calls.ts';

export interface Sampling {
  readonly temperature: number;
  readonly topP?: number;
  readonly topK?: number;
}

export interface CompletionSettings {
  readonly chat: GatewayChat;
  readonly tokenizer: TextTokenizer;
  readonly batcher: GenerationBatcher;
  /** Longest sequence the model takes: prompt plus new tokens. */
  readonly maxContext: number;
  /** New tokens when the request sets no max_tokens, and the most it may ask for. */
  readonly defaultMaxTokens: number;
  readonly maxTokensCap: number;
  /** Fixed sampling (a training run's: its update assumes it), or null to take the request's. */
  readonly sampling: Sampling | null;
  /** The sampling seed of an episode's call number `ordinal`. */
  rowSeed(episode: Episode, ordinal: number, request: ChatRequest): number;
}

export interface Completion {
  readonly call: CallRecord;
  readonly reply: GatewayMessage & { readonly tool_calls?: readonly ToolCallOut[] };
  readonly finishReason: FinishReason;
  readonly usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  /** Per sampled token: its text and log-prob (the request's `logprobs`). */
  readonly tokens: readonly { token: string; logprob: number }[];
}

/** The text of the messages after the last assistant message (what the model answers now). */
function observationOf(messages: readonly GatewayMessage[]): string {
  const last = messages.map((m) => m.role).lastIndexOf('assistant');
  return messages
    .slice(last + 1)
    .filter((m) => m.role !== 'system')
    .map((m) => m.content)
    .join('\n');
}

/** The text cut before the first stop sequence the client asked for (OpenAI leaves it out). */
function cutAtStop(text: string, stops: readonly string[]): string {
  const at = Math.min(...stops.map((s) => text.indexOf(s)).filter((i) => i >= 0));
  return Number.isFinite(at) ? text.slice(0, at) : text;
}

const TEMPLATE = roleCode('template');
const CALL_OPEN = '<tool_call>\n';

/** The text a reply must start with under the request's tool_choice ('' for auto and none). */
export function forcedStart(request: ChatRequest, tools: readonly Record<string, unknown>[]): string {
  const choice = request.toolChoice;
  if (choice === 'auto' || choice === 'none') return '';
  if (tools.length === 0) throw new RequestError('tool_choice', 'asks for a tool call, and the request has no tools');
  if (choice === 'required') return CALL_OPEN;
  const names = tools.map((t) => (t.function as { name: string }).name);
  if (!names.includes(choice.name)) {
    throw new RequestError('tool_choice', `names function ${JSON.stringify(choice.name)}, which tools does not define`);
  }
  return `${CALL_OPEN}{"name": ${JSON.stringify(choice.name)}, "arguments": `;
}

/** The prompt tokens of a call (the forced start's last), refused when they leave no room for a new token. */
function promptOf(
  s: CompletionSettings,
  episode: Episode,
  request: ChatRequest,
  tools: readonly unknown[],
  ordinal: number,
  forced: string,
) {
  const planned = planPrompt(episode, request.messages, tools, s.chat);
  const start = forced === '' ? [] : s.tokenizer.encode(forced);
  const plan = { ...planned, ids: [...planned.ids, ...start], roles: [...planned.roles, ...start.map(() => TEMPLATE)] };
  if (plan.diverged) {
    log.warn(
      { episode: episode.id, call: ordinal },
      'a reply sent back is not what the model wrote: prompt re-rendered',
    );
  }
  if (plan.ids.length >= s.maxContext) {
    episode.truncated = true;
    const why = `the prompt has ${plan.ids.length} tokens; the model's context is ${s.maxContext}`;
    throw new RequestError('messages', why, 400, 'context_length_exceeded');
  }
  return plan;
}

/** What the model wrote, as the reply: text less the stop, content and tool calls. */
function replyOf(
  s: CompletionSettings,
  g: Generated,
  request: ChatRequest,
  callId: (i: number) => string,
  parse: boolean,
  forced: string,
) {
  const last = g.tokens[g.tokens.length - 1];
  const endedByEos = g.finishReason === 'stop' && s.chat.stopTokenIds.includes(last);
  // Only the template's own stop closes the turn; after another eos the template's close still follows.
  const wroteStop = endedByEos && s.tokenizer.decode([last]) === s.chat.stop;
  const response = s.tokenizer.decode(endedByEos ? g.tokens.slice(0, -1) : g.tokens);
  const text = forced + cutAtStop(response, request.stop);
  const parsed = parse ? parseToolCalls(text) : { content: text, calls: [] };
  const toolCalls: ToolCallOut[] = parsed.calls.map((c, i) => ({ id: callId(i), type: 'function', function: c }));
  const reply: GatewayMessage & { readonly tool_calls?: readonly ToolCallOut[] } = {
    role: 'assistant',
    content: parsed.content,
    ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
  };
  const finishReason: FinishReason = toolCalls.length > 0 ? 'tool_calls' : g.finishReason;
  return { reply, toolCalls, finishReason, wroteStop, response };
}

/** Where a streamed completion goes while it is generated: its id once the prompt is accepted, then text. */
export interface StreamSink {
  start(id: string): void;
  text(delta: string): void;
}

/** `sink`: stream the reply's text as it is generated (what is sent is a prefix of the final content). */
export async function complete(
  s: CompletionSettings,
  episode: Episode,
  request: ChatRequest,
  sink?: StreamSink,
): Promise<Completion & { readonly streamed: string }> {
  const ordinal = episode.nextOrdinal();
  const tools = request.toolChoice === 'none' ? [] : request.tools;
  const forced = forcedStart(request, tools);
  const plan = promptOf(s, episode, request, tools, ordinal, forced);
  const room = s.maxContext - plan.ids.length;
  const maxNewTokens = Math.min(request.maxTokens ?? s.defaultMaxTokens, s.maxTokensCap, room);
  const id = `chatcmpl-${episode.id}-${ordinal}`;
  sink?.start(id);
  const { stopTokenIds } = s.chat;
  const text =
    sink &&
    new StreamedText({ tokenizer: s.tokenizer, forced, stops: request.stop, stopTokenIds, calls: tools.length > 0 });
  const g = await s.batcher.generate({
    prompt: plan.ids,
    maxNewTokens,
    sampling: s.sampling ?? { temperature: request.temperature ?? 1, topP: request.topP },
    seed: s.rowSeed(episode, ordinal, request),
    stopStrings: request.stop,
    stopTokenIds,
    ...(text && {
      onToken: (token: number) => {
        const delta = text.push(token);
        if (delta !== '') sink!.text(delta);
      },
    }),
  });
  const { reply, toolCalls, finishReason, wroteStop, response } = replyOf(
    s,
    g,
    request,
    (i) => `call_${episode.id}_${ordinal}_${i}`,
    tools.length > 0,
    forced,
  );
  const call: CallRecord = {
    ordinal,
    id,
    parent: plan.parent,
    promptIds: plan.ids,
    promptRoles: plan.roles,
    sampled: g.tokens,
    logprobs: g.logprobs,
    wroteStop,
    finishReason,
    conversation: [...request.messages, reply],
    toolsKey: JSON.stringify(tools),
    observation: observationOf(request.messages),
    response,
    toolNames: toolCalls.map((c) => c.function.name),
    diverged: plan.diverged,
    reward: null,
  };
  episode.commit(call);
  const tokens = request.logprobs
    ? g.tokens.map((id, i) => ({ token: s.tokenizer.decode([id]), logprob: g.logprobs[i] }))
    : [];
  const [prompt, written] = [plan.ids.length, g.tokens.length];
  const usage = { prompt_tokens: prompt, completion_tokens: written, total_tokens: prompt + written };
  return { call, reply, finishReason, usage, tokens, streamed: text?.text ?? '' };
}
