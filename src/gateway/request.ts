/**
 * The subset of the OpenAI Chat Completions request that agents send, checked and normalised: messages (content
 * as one string; `developer` read as `system`), function tools, tool_choice, sampling and stop settings,
 * streaming. Whatever would change what is sampled but is not implemented (n > 1, penalties, logit_bias, JSON
 * response formats, top_logprobs) is refused with a 400 naming the parameter, never silently ignored.
 */
import type { ChatMessage } from '../agent/chat-template.ts';
import { plainNumbers } from '../agent/template-numbers.ts';

/** Thrown when a request is malformed; the gateway answers 400 with OpenAI's error shape. */
export class RequestError extends Error {
  constructor(
    readonly param: string | null,
    message: string,
    readonly status = 400,
    readonly code: string | null = null,
  ) {
    super(message);
    this.name = 'RequestError';
  }
}

/** A tool call as responses carry it (arguments: a JSON text). */
export interface ToolCallOut {
  readonly id: string;
  readonly type: 'function';
  readonly function: { readonly name: string; readonly arguments: string };
}

/**
 * A tool call as a request carries it back: arguments as the client sent them, a JSON text or an object (its
 * numbers LosslessNumbers), so the chat template renders them as transformers' apply_chat_template would.
 */
export interface ToolCallIn {
  readonly id: string;
  readonly type: 'function';
  readonly function: { readonly name: string; readonly arguments: string | Readonly<Record<string, unknown>> };
}

/** A message as the gateway keeps it: content always a string, tool calls in OpenAI's form. */
export interface GatewayMessage extends ChatMessage {
  readonly role: 'system' | 'user' | 'assistant' | 'tool';
  readonly content: string;
  readonly tool_calls?: readonly ToolCallIn[];
  readonly tool_call_id?: string;
  readonly name?: string;
}

export type ToolChoice = 'auto' | 'none' | 'required' | { readonly name: string };

export interface ChatRequest {
  readonly model: string;
  readonly messages: readonly GatewayMessage[];
  /** Function tools as sent ({type: 'function', function: {...}}): the chat template renders them. */
  readonly tools: readonly Record<string, unknown>[];
  readonly toolChoice: ToolChoice;
  readonly temperature?: number;
  readonly topP?: number;
  readonly maxTokens?: number;
  readonly stop: readonly string[];
  readonly seed?: number;
  readonly stream: boolean;
  readonly includeUsage: boolean;
  readonly logprobs: boolean;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function fail(param: string, message: string): never {
  throw new RequestError(param, message);
}

/** Content as text: a string, null (an assistant turn that only calls tools) or text parts. */
function contentText(v: unknown, param: string): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (!Array.isArray(v)) fail(param, 'must be a string or an array of text parts');
  return v
    .map((part, i) => {
      const text = isObj(part) && part.type === 'text' ? part.text : undefined;
      if (typeof text !== 'string') fail(`${param}[${i}]`, 'only text parts are supported');
      return text;
    })
    .join('');
}

function toolCallsOf(v: unknown, param: string): ToolCallIn[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) fail(param, 'must be an array');
  return v.map((call, i) => {
    const fn = isObj(call) ? call.function : undefined;
    if (!isObj(fn) || typeof fn.name !== 'string') fail(`${param}[${i}].function.name`, 'must be a string');
    const args = fn.arguments ?? {};
    if (typeof args !== 'string' && !isObj(args))
      fail(`${param}[${i}].function.arguments`, 'must be a JSON text or object');
    const id = typeof call.id === 'string' ? call.id : '';
    return { id, type: 'function' as const, function: { name: fn.name, arguments: args } };
  });
}

/** `v` with plain numbers for the checks; `lossless` the same message as parsed, for the tool calls' arguments. */
function messageOf(v: unknown, i: number, lossless: unknown): GatewayMessage {
  const param = `messages[${i}]`;
  if (!isObj(v) || !isObj(lossless)) fail(param, 'must be an object');
  const role = v.role === 'developer' ? 'system' : v.role;
  if (role !== 'system' && role !== 'user' && role !== 'assistant' && role !== 'tool') {
    fail(`${param}.role`, `unsupported role ${JSON.stringify(v.role)}`);
  }
  const content = contentText(v.content, `${param}.content`);
  const toolCalls = role === 'assistant' ? toolCallsOf(lossless.tool_calls, `${param}.tool_calls`) : undefined;
  return {
    role,
    content,
    ...(toolCalls?.length ? { tool_calls: toolCalls } : {}),
    ...(role === 'tool' && typeof v.tool_call_id === 'string' ? { tool_call_id: v.tool_call_id } : {}),
    ...(typeof v.name === 'string' ? { name: v.name } : {}),
  };
}

/** Tools as sent, numbers kept as their source text (LosslessNumbers) for the template. */
function toolsOf(v: unknown): Obj[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) fail('tools', 'must be an array');
  return v.map((t: unknown, i) => {
    if (!isObj(t) || t.type !== 'function' || !isObj(t.function) || typeof t.function.name !== 'string') {
      fail(`tools[${i}]`, 'must be {"type": "function", "function": {"name": ..., "parameters": ...}}');
    }
    return t;
  });
}

function toolChoiceOf(v: unknown): ToolChoice {
  if (v === undefined || v === null) return 'auto';
  if (v === 'auto' || v === 'none' || v === 'required') return v;
  if (isObj(v) && isObj(v.function) && typeof v.function.name === 'string') return { name: v.function.name };
  return fail('tool_choice', 'must be "auto", "none", "required" or {"type": "function", "function": {"name": ...}}');
}

function numberIn(body: Obj, key: string, lo: number, hi: number, integer = false): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < lo || v > hi || (integer && !Number.isInteger(v))) {
    fail(key, `must be ${integer ? 'an integer' : 'a number'} in [${lo}, ${hi}]`);
  }
  return v;
}

function stopOf(v: unknown): string[] {
  if (v === undefined || v === null) return [];
  const list = typeof v === 'string' ? [v] : v;
  if (!Array.isArray(list) || list.length > 4 || list.some((s) => typeof s !== 'string' || s === '')) {
    fail('stop', 'must be a non-empty string or up to 4 of them');
  }
  return list as string[];
}

/** Parameters whose non-default values would change sampling in ways the gateway does not implement. */
function refuseUnsupported(body: Obj): void {
  if (body.n !== undefined && body.n !== null && body.n !== 1) fail('n', 'only n = 1 is supported');
  for (const key of ['frequency_penalty', 'presence_penalty']) {
    if (body[key] !== undefined && body[key] !== null && body[key] !== 0) fail(key, 'is not supported (only 0)');
  }
  if (isObj(body.logit_bias) && Object.keys(body.logit_bias).length > 0) fail('logit_bias', 'is not supported');
  if (typeof body.top_logprobs === 'number' && body.top_logprobs > 0) fail('top_logprobs', 'is not supported');
  const format = isObj(body.response_format) ? body.response_format.type : undefined;
  if (format !== undefined && format !== 'text') fail('response_format', `${JSON.stringify(format)} is not supported`);
}

/**
 * `parsed` is the body as JSON.parse or lossless-json's parse reads it (http-io's readLosslessJson): settings are
 * read as plain numbers; tools and tool-call arguments keep the numbers' source text for the chat template.
 */
export function parseChatRequest(parsed: unknown): ChatRequest {
  const body = plainNumbers(parsed);
  if (!isObj(body) || !isObj(parsed)) fail('body', 'must be a JSON object');
  if (!Array.isArray(body.messages) || body.messages.length === 0) fail('messages', 'must be a non-empty array');
  const losslessMessages = parsed.messages as unknown[];
  refuseUnsupported(body);
  const maxTokens =
    numberIn(body, 'max_completion_tokens', 1, 2 ** 31, true) ?? numberIn(body, 'max_tokens', 1, 2 ** 31, true);
  return {
    model: typeof body.model === 'string' ? body.model : '',
    messages: body.messages.map((m, i) => messageOf(m, i, losslessMessages[i])),
    tools: toolsOf(parsed.tools),
    toolChoice: toolChoiceOf(body.tool_choice),
    temperature: numberIn(body, 'temperature', 0, 2),
    topP: numberIn(body, 'top_p', 0, 1) === 0 ? fail('top_p', 'must be > 0') : numberIn(body, 'top_p', 0, 1),
    maxTokens,
    stop: stopOf(body.stop),
    seed: numberIn(body, 'seed', -(2 ** 63), 2 ** 63, true),
    stream: body.stream === true,
    includeUsage: isObj(body.stream_options) && body.stream_options.include_usage === true,
    logprobs: body.logprobs === true,
  };
}
