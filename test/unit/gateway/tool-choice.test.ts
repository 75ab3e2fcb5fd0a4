/**
 * tool_choice as OpenAI defines it: "required" and a named function make the reply a call. The gateway starts the
 * reply with the opening of a call as template tokens (never trained); the model writes the rest, and the episode
 * continues token-in/token-out over the forced start.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { roleCode } from '../../../src/agent/chat-format.ts';
import { CALC_TOOL, scripted, tokenizer, withGateway } from './fixtures.ts';

/** The reply's function calls as [name, parsed arguments]. */
const callsOf = (m: OpenAI.ChatCompletionMessage) =>
  (m.tool_calls ?? []).map((c) => (c.type === 'function' ? [c.function.name, JSON.parse(c.function.arguments)] : []));

const ECHO_TOOL = { type: 'function', function: { name: 'echo', parameters: { type: 'object' } } } as const;

test('"required": the reply opens a call the model completes; the opening is template, the rest trained', async () => {
  const written = '{"name": "calc", "arguments": {"expr": "2*3"}}\n</tool_call><|im_end|>';
  const backend = scripted([written]);
  const [t] = await withGateway(backend, async (client) => {
    const messages = [{ role: 'user' as const, content: '2*3?' }];
    const tools = [CALC_TOOL, ECHO_TOOL];
    const { choices } = await client.chat.completions.create({ model: 'm', messages, tools, tool_choice: 'required' });
    assert.equal(choices[0].finish_reason, 'tool_calls');
    assert.deepEqual(callsOf(choices[0].message), [['calc', { expr: '2*3' }]]);
    const prompt = tokenizer.decode(backend.prompts[0]);
    assert.ok(prompt.endsWith('<|im_start|>assistant\n<think>\n\n</think>\n\n<tool_call>\n'), prompt.slice(-60));
  });
  const opening = tokenizer.encode('<tool_call>\n');
  const at = t.ids.length - tokenizer.encode(written).length;
  assert.deepEqual(t.ids.slice(at - opening.length, at), opening);
  assert.deepEqual(
    t.mask.slice(at - opening.length, at),
    opening.map(() => 0),
  );
  assert.deepEqual(
    t.roles.slice(at - opening.length, at),
    opening.map(() => roleCode('template')),
  );
  assert.ok(t.mask.slice(at).every((m) => m === 1));
});

test('a named function: the reply calls it with the arguments the model writes', async () => {
  const backend = scripted(['{"text": "hi"}}\n</tool_call><|im_end|>']);
  await withGateway(backend, async (client) => {
    const messages = [{ role: 'user' as const, content: 'Say hi.' }];
    const tool_choice = { type: 'function' as const, function: { name: 'echo' } };
    const tools = [CALC_TOOL, ECHO_TOOL];
    const { choices } = await client.chat.completions.create({ model: 'm', messages, tools, tool_choice });
    assert.deepEqual(callsOf(choices[0].message), [['echo', { text: 'hi' }]]);
    assert.ok(tokenizer.decode(backend.prompts[0]).endsWith('<tool_call>\n{"name": "echo", "arguments": '));
  });
});

test('a call forced without tools, or naming a function the tools lack, is a 400 naming tool_choice', async () => {
  await withGateway(scripted(['unused']), async (client) => {
    const messages = [{ role: 'user' as const, content: 'x' }];
    await assert.rejects(
      client.chat.completions.create({ model: 'm', messages, tool_choice: 'required' }),
      (e: InstanceType<typeof OpenAI.APIError>) => e.status === 400 && e.param === 'tool_choice',
    );
    const tool_choice = { type: 'function' as const, function: { name: 'nope' } };
    await assert.rejects(
      client.chat.completions.create({ model: 'm', messages, tools: [CALC_TOOL], tool_choice }),
      (e: InstanceType<typeof OpenAI.APIError>) =>
        e.status === 400 && e.param === 'tool_choice' && /"nope"/.test(e.message),
    );
  });
});
