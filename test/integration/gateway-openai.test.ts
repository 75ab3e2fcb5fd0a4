/**
 * The openai npm package, unmodified, against the gateway: a tiny random-init Qwen3 (real tokenizer and chat
 * template) served by `serveGateway`, streaming and not; tool calls (scripted policy: a random model writes none)
 * arriving as `tool_calls` both ways; errors as the SDK's typed errors; rewards and recorded episodes over HTTP.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { serveGateway } from '../../src/gateway/serve.ts';
import { startGateway, type Gateway } from '../../src/gateway/server.ts';
import { writeTinyModel } from '../unit/rl/tiny-hf-model.ts';
import { CALC_TOOL, qwen3Chat, scripted, tokenizer } from '../unit/gateway/fixtures.ts';

const scratch = mkdtempSync(join(tmpdir(), 'starpo-gateway-'));
let served: Gateway & { model: string };
before(async () => {
  const model = await writeTinyModel(join(scratch, 'qwen3'), 'qwen3');
  served = await serveGateway({ model, overrides: ['threads=1', 'modelContext=512'], port: 0, maxTokens: 12 });
});
after(async () => {
  await served?.close();
  rmSync(scratch, { recursive: true, force: true });
});

const ask = {
  model: 'whatever',
  messages: [{ role: 'user' as const, content: 'Add 2 and 3.' }],
  tools: [CALC_TOOL],
  seed: 7,
};

test('the SDK gets the same completion from the model streamed and not (same seed), with usage; lists the model', async () => {
  const client = new OpenAI({ baseURL: served.url, apiKey: 'agent-1' });
  const whole = await client.chat.completions.create(ask);
  const stream = await client.chat.completions.create({
    ...ask,
    stream: true,
    stream_options: { include_usage: true },
  });
  let content = '';
  let finish: string | null = null;
  let usage: unknown = null;
  for await (const chunk of stream) {
    content += chunk.choices[0]?.delta.content ?? '';
    finish = chunk.choices[0]?.finish_reason ?? finish;
    usage = chunk.usage ?? usage;
  }
  assert.equal(content, whole.choices[0].message.content);
  assert.deepEqual([finish, usage], [whole.choices[0].finish_reason, whole.usage]);
  assert.equal(whole.usage!.completion_tokens, 12);
  assert.deepEqual(
    (await client.models.list()).data.map((m) => m.id),
    [served.model],
  );
});

test('tool calls reach the SDK as tool_calls, streamed (accumulated by the SDK) and not', async () => {
  const reply = 'Let me compute.\n<tool_call>\n{"name": "calc", "arguments": {"expr": "2+3"}}\n</tool_call><|im_end|>';
  const gateway = await startGateway({
    backend: scripted([reply]),
    tokenizer,
    chat: qwen3Chat(),
    modelName: 'm',
    maxContext: 2048,
    defaultMaxTokens: 64,
    openEpisodes: true,
  });
  try {
    const client = new OpenAI({ baseURL: gateway.url, apiKey: 'k' });
    const whole = (await client.chat.completions.create(ask)).choices[0];
    const streamed = await client.chat.completions.stream(ask).finalChatCompletion();
    assert.equal(whole.finish_reason, 'tool_calls');
    assert.deepEqual(whole.message.content, 'Let me compute.');
    const calls = whole.message.tool_calls!.map(
      (c) => c.type === 'function' && [c.function.name, c.function.arguments],
    );
    assert.deepEqual(calls, [['calc', '{"expr":"2+3"}']]);
    const { message } = streamed.choices[0];
    assert.deepEqual([message.content, message.tool_calls!.length], ['Let me compute.', 1]);
    assert.equal(streamed.choices[0].finish_reason, 'tool_calls');
  } finally {
    await gateway.close();
  }
});

test('errors reach the SDK typed: unknown token 401, bad parameter 400, prompt past the context 400', async () => {
  const trainer = await startGateway({
    backend: scripted(['x']),
    tokenizer,
    chat: qwen3Chat(),
    modelName: 'm',
    maxContext: 40,
    defaultMaxTokens: 4,
  });
  type BadRequest = InstanceType<typeof OpenAI.BadRequestError>;
  try {
    const stranger = new OpenAI({ baseURL: trainer.url, apiKey: 'not-issued', maxRetries: 0 });
    await assert.rejects(stranger.chat.completions.create(ask), OpenAI.AuthenticationError);
    const client = new OpenAI({ baseURL: trainer.url, apiKey: trainer.episodes.issue('e').token, maxRetries: 0 });
    await assert.rejects(client.chat.completions.create({ ...ask, n: 3 }), (e: BadRequest) => e.param === 'n');
    await assert.rejects(client.chat.completions.create(ask), (e: BadRequest) => e.code === 'context_length_exceeded');
  } finally {
    await trainer.close();
  }
});

test('a reward reported over HTTP lands on the episode, whose trajectories the gateway serves', async () => {
  const client = new OpenAI({ baseURL: served.url, apiKey: 'agent-2' });
  const done = await client.chat.completions.create(ask);
  const id = served.episodes.find('agent-2')!.id;
  const headers = { authorization: 'Bearer agent-2' };
  const body = JSON.stringify({ reward: 0.5 });
  const posted = await fetch(`${served.url}/episodes/${id}/reward`, { method: 'POST', headers, body });
  assert.deepEqual(await posted.json(), { id, reward: 0.5, success: null });
  type Described = { trajectories: { return: number; ids: number[] }[] };
  const episode = (await (await fetch(`${served.url}/episodes/${id}`, { headers })).json()) as Described;
  assert.deepEqual(
    episode.trajectories.map((t) => [t.return, t.ids.length]),
    [[0.5, done.usage!.total_tokens]],
  );
  const other = await fetch(`${served.url}/episodes/${id}`, { headers: { authorization: 'Bearer agent-1' } });
  assert.equal(other.status, 403);
});
