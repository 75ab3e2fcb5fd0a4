/**
 * A completion as OpenAI's API writes it: one `chat.completion` object, or the `chat.completion.chunk` events of
 * a stream (role, content, one delta per tool call, the finish reason, usage when asked), which the openai SDK
 * accumulates back into the same message. The stream is written once generation ends: the engine decodes a
 * batch in one call, so there are no earlier tokens to send.
 */
import type { Completion } from './completion.ts';
import { RequestError } from './request.ts';

type Json = Record<string, unknown>;

function logprobsOf(c: Completion): Json | null {
  if (c.tokens.length === 0) return null;
  return {
    content: c.tokens.map((t) => ({
      token: t.token,
      logprob: t.logprob,
      bytes: [...Buffer.from(t.token, 'utf8')],
      top_logprobs: [],
    })),
    refusal: null,
  };
}

export function completionBody(c: Completion, model: string, created: number): Json {
  const content = c.reply.content === '' && c.reply.tool_calls ? null : c.reply.content;
  const calls = c.reply.tool_calls ? { tool_calls: c.reply.tool_calls } : {};
  const message = { role: 'assistant', content, refusal: null, ...calls };
  return {
    id: c.call.id,
    object: 'chat.completion',
    created,
    model,
    system_fingerprint: null,
    choices: [{ index: 0, message, logprobs: logprobsOf(c), finish_reason: c.finishReason }],
    usage: c.usage,
  };
}

export function streamChunks(c: Completion, model: string, created: number, includeUsage: boolean): Json[] {
  const head = { id: c.call.id, object: 'chat.completion.chunk', created, model, system_fingerprint: null };
  const chunk = (delta: Json, finish: string | null = null, logprobs: Json | null = null): Json => ({
    ...head,
    choices: [{ index: 0, delta, logprobs, finish_reason: finish }],
    ...(includeUsage ? { usage: null } : {}),
  });
  const calls = c.reply.tool_calls ?? [];
  return [
    chunk({ role: 'assistant', content: '' }),
    ...(c.reply.content ? [chunk({ content: c.reply.content }, null, logprobsOf(c))] : []),
    ...calls.map((call, index) => chunk({ tool_calls: [{ index, ...call }] })),
    chunk({}, c.finishReason),
    ...(includeUsage ? [{ ...head, choices: [], usage: c.usage }] : []),
  ];
}

/** OpenAI's error body. */
export function errorBody(err: unknown): { status: number; body: Json } {
  if (err instanceof RequestError) {
    const error = { message: err.message, type: 'invalid_request_error', param: err.param, code: err.code };
    return { status: err.status, body: { error } };
  }
  const error = { message: (err as Error).message, type: 'server_error', param: null, code: null };
  return { status: 500, body: { error } };
}
