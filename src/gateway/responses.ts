/**
 * A completion as OpenAI's API writes it: one `chat.completion` object, or the `chat.completion.chunk` events of
 * a stream (role, content, one delta per tool call, the finish reason, usage when asked), which the openai SDK
 * accumulates back into the same message. A stream's content goes out as it is generated (stream-text.ts: what
 * can no longer be taken back); what follows at the end is the rest of the content (with the log-probs, when
 * asked), the tool calls, the finish reason and the usage.
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

/** Writes a completion's stream chunks: the opening one, content deltas as they come, then the ending ones. */
export function streamWriter(id: string, model: string, created: number, includeUsage: boolean) {
  const head = { id, object: 'chat.completion.chunk', created, model, system_fingerprint: null };
  const chunk = (delta: Json, finish: string | null = null, logprobs: Json | null = null): Json => ({
    ...head,
    choices: [{ index: 0, delta, logprobs, finish_reason: finish }],
    ...(includeUsage ? { usage: null } : {}),
  });
  return {
    opening: (): Json => chunk({ role: 'assistant', content: '' }),
    text: (content: string): Json => chunk({ content }),
    /** `streamed`: the content already sent (a prefix of the reply's). */
    ending(c: Completion, streamed: string): Json[] {
      if (!c.reply.content.startsWith(streamed)) throw new Error('streamed text is not a prefix of the reply');
      const rest = c.reply.content.slice(streamed.length);
      const calls = c.reply.tool_calls ?? [];
      return [
        ...(rest !== '' || c.tokens.length > 0 ? [chunk({ content: rest }, null, logprobsOf(c))] : []),
        ...calls.map((call, index) => chunk({ tool_calls: [{ index, ...call }] })),
        chunk({}, c.finishReason),
        ...(includeUsage ? [{ ...head, choices: [], usage: c.usage }] : []),
      ];
    },
  };
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
