import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parse } from 'lossless-json';
import { chatTemplateFrom } from '../../../src/agent/chat-template.ts';
import { parseChatRequest, RequestError } from '../../../src/gateway/request.ts';
import { parseToolCalls } from '../../../src/gateway/tool-calls.ts';
import { realTokenizerConfig } from '../agent/real-tokenizers.ts';

test('a request is normalised: text parts joined, developer as system, null content as empty, arguments as sent', () => {
  const r = parseChatRequest({
    model: 'm',
    stop: 'END',
    max_completion_tokens: 7,
    stream: true,
    stream_options: { include_usage: true },
    messages: [
      { role: 'developer', content: 'Be brief.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', function: { name: 'f', arguments: { x: 1 } } }] },
      { role: 'tool', tool_call_id: 'c1', content: '2' },
    ],
  });
  assert.deepEqual(r.messages, [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'ab' },
    {
      role: 'assistant',
      content: '',
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: { x: 1 } } }],
    },
    { role: 'tool', content: '2', tool_call_id: 'c1' },
  ]);
  assert.deepEqual([r.stop, r.maxTokens, r.stream, r.includeUsage, r.toolChoice], [['END'], 7, true, true, 'auto']);
});

test('parameters that would change sampling in unimplemented ways are refused with a 400 naming them', () => {
  const messages = [{ role: 'user', content: 'hi' }];
  const refused = [
    [{ n: 2 }, 'n'],
    [{ presence_penalty: 0.5 }, 'presence_penalty'],
    [{ top_logprobs: 2 }, 'top_logprobs'],
    [{ response_format: { type: 'json_object' } }, 'response_format'],
    [{ temperature: 3 }, 'temperature'],
    [{ stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop'],
  ] as const;
  for (const [extra, param] of refused) {
    assert.throws(
      () => parseChatRequest({ messages, ...extra }),
      (e: RequestError) => e.param === param && e.status === 400,
    );
  }
  assert.throws(
    () => parseChatRequest({ messages: [] }),
    (e: RequestError) => e.param === 'messages',
  );
  const oldRole = { messages: [{ role: 'function', content: 'x' }] };
  assert.throws(
    () => parseChatRequest(oldRole),
    (e: RequestError) => e.param === 'messages[0].role',
  );
});

test('tool-call blocks that parse become calls and leave the content; one that does not parse stays as written', () => {
  const text =
    'Let me check.\n<tool_call>\n{"name": "calc", "arguments": {"expr": "1+2"}}\n</tool_call>\n' +
    '<tool_call>{"name": "f"}</tool_call>\n';
  assert.deepEqual(parseToolCalls(text), {
    content: 'Let me check.',
    calls: [
      { name: 'calc', arguments: '{"expr":"1+2"}' },
      { name: 'f', arguments: '{}' },
    ],
  });
  const bad = '<tool_call>{bad}</tool_call> done';
  assert.deepEqual(parseToolCalls(bad), { content: bad, calls: [] });
  assert.deepEqual(parseToolCalls('<tool_call>{"name": "cut'), { content: '<tool_call>{"name": "cut', calls: [] });
});

test("a request's tool schema and call arguments render as transformers renders them: 1.0, 1e-07, exact big ints", () => {
  // The body as the gateway reads it (readLosslessJson), from the conversation transformers rendered for the fixture.
  const chat = new URL('../../fixtures/chat/', import.meta.url).pathname;
  const cases = parse(readFileSync(`${chat}conversations.json`, 'utf8')) as { name: string }[];
  const { name, messages, tools } = cases.find((c) => c.name === 'qwen3_tool_call_numbers') as Record<string, unknown>;
  const expected = JSON.parse(readFileSync(`${chat}expected.json`, 'utf8')) as {
    cases: Record<string, { text: string }>;
  };
  const r = parseChatRequest({ model: 'm', messages, tools, max_tokens: parse('16') });
  assert.equal(r.maxTokens, 16);
  const text = chatTemplateFrom(realTokenizerConfig('qwen3'))!.render(r.messages, {
    addGenerationPrompt: true,
    tools: r.tools,
  });
  assert.equal(text, expected.cases[name as string].text);
  assert.match(text, /"w": 1\.0, "tare": 0\.25, "id": 12345678901234567890, "eps": 1e-07, "scale": 1\.5e\+20/);
  assert.match(text, /"minimum": 0\.0, "maximum": 1000\.0/);
});
