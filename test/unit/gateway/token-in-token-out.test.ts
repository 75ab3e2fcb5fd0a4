/**
 * Token-in/token-out across a multi-call episode driven by the openai SDK, with two tool-call round trips: the
 * tokens the trajectory trains are exactly the tokens the model sampled, every call's prompt is the trajectory so
 * far, and re-rendering the final conversation through the same template would have given other tokens (Qwen3's
 * template drops the reasoning of turns before the last user message and respaces the calls' JSON).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { startGateway } from '../../../src/gateway/server.ts';
import { episodeTrajectories } from '../../../src/gateway/trajectories.ts';
import { CALC_TOOL, qwen3Chat, scripted, tokenizer } from './fixtures.ts';

const REPLIES = [
  '<think>\nAdd first.\n</think>\n\n<tool_call>\n{"name":"calc","arguments":{"expr":"1+2"}}\n</tool_call><|im_end|>',
  '<think>\nNow times 4.\n</think>\n\n<tool_call>\n{"name":"calc","arguments":{"expr":"3*4"}}\n</tool_call><|im_end|>',
  '<think>\nDone.\n</think>\n\nThe answer is 12.<|im_end|>',
];

async function playEpisode(client: OpenAI): Promise<ChatCompletionMessageParam[]> {
  const messages: ChatCompletionMessageParam[] = [
    { role: 'system', content: 'Use the calculator.' },
    { role: 'user', content: '(1+2)*4?' },
  ];
  for (let k = 0; k < 3; k++) {
    const { choices } = await client.chat.completions.create({ model: 'any', messages, tools: [CALC_TOOL] });
    const reply = choices[0].message;
    messages.push(reply);
    const result = k === 0 ? '3' : '12';
    for (const c of reply.tool_calls ?? []) messages.push({ role: 'tool', tool_call_id: c.id, content: result });
    if (k === 1) messages.push({ role: 'user', content: 'Answer in one sentence.' });
  }
  return messages;
}

test('the trained tokens are the sampled tokens across three calls and two tool-call round trips', async () => {
  const backend = scripted(REPLIES);
  const chat = qwen3Chat('on');
  const gateway = await startGateway({
    backend,
    tokenizer,
    chat,
    modelName: 'm',
    maxContext: 4096,
    defaultMaxTokens: 64,
  });
  try {
    const episode = gateway.episodes.issue('e1');
    const messages = await playEpisode(new OpenAI({ baseURL: gateway.url, apiKey: episode.token }));
    const [t, ...others] = episodeTrajectories(episode.calls, 'prefix', { reward: 1, success: true });
    assert.equal(others.length, 0);
    assert.deepEqual(
      t.ids.filter((_, i) => t.mask[i] === 1),
      backend.sampled.flat(),
    );
    const sampledLogprobs = backend.sampled.flatMap((s) => s.map((_, i) => -(i + 1) / 8));
    assert.deepEqual(
      t.logprobs.filter((_, i) => t.mask[i] === 1),
      sampledLogprobs,
    );
    backend.prompts.forEach((p, k) =>
      assert.deepEqual(t.ids.slice(0, p.length), p, `prompt ${k} is the trajectory so far`),
    );
    assert.deepEqual(
      t.turns.map((x) => x.parsedActions),
      [['calc'], ['calc'], []],
    );
    const rerendered = chat.jinja!.template.render(messages.map((m) => ({ ...m, content: String(m.content ?? '') })));
    assert.notEqual(rerendered, tokenizer.decode(t.ids), 'the template rewrites earlier turns');
    assert.ok(!rerendered.includes('Add first.') && tokenizer.decode(t.ids).includes('Add first.'));
  } finally {
    await gateway.close();
  }
});
