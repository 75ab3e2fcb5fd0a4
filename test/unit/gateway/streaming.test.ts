/**
 * Streaming: the reply's text goes out as the model writes it, never a character the final reply takes back; the
 * SDK accumulates the same message as without streaming.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StreamedText } from '../../../src/gateway/stream-text.ts';
import { CALC_TOOL, IM_END, scripted, tokenizer, withGateway } from './fixtures.ts';

/** Every delta the text gives for `reply`'s tokens, one token at a time. */
function deltas(reply: string, o: { stops?: string[]; calls?: boolean; forced?: string } = {}): string[] {
  const text = new StreamedText({
    tokenizer,
    forced: o.forced ?? '',
    stops: o.stops ?? [],
    stopTokenIds: [IM_END],
    calls: o.calls ?? false,
  });
  return tokenizer.encode(reply).flatMap((t) => text.push(t) || []);
}

test('streamed text stops before a stop sequence, a tool call and the tails that may become one', () => {
  assert.deepEqual(deltas('Hello there, world.<|im_end|>').join(''), 'Hello there, world.');
  assert.ok(deltas('Hello there, world.').length >= 3, 'word by word, not at the end');
  assert.equal(deltas('one two END three', { stops: ['END'] }).join(''), 'one two');
  assert.equal(deltas('Let me call.\n<tool_call>\n{"name": "calc"}', { calls: true }).join(''), 'Let me call.');
  assert.equal(deltas('a <tool_', { calls: true }).join(''), 'a', 'a tail that may open a call waits');
  assert.equal(deltas('a <tool_', { calls: false }).join(''), 'a <tool_');
  assert.equal(deltas('{"x": 1}', { calls: true, forced: '<tool_call>\n' }).join(''), '', 'a forced call: nothing');
  assert.equal(deltas('café ☕').join(''), 'café ☕', 'characters whole');
});

test('a streamed reply reaches the SDK token by token before generation ends, and accumulates to the same message', async () => {
  const replies = [
    'The sum is 4, and the product is 4 as well.<|im_end|>',
    'Calling the calculator now.\n<tool_call>\n{"name": "calc", "arguments": {"expr": "2+2"}}\n</tool_call><|im_end|>',
  ];
  for (const [reply, tools] of [
    [replies[0], []],
    [replies[1], [CALC_TOOL]],
  ] as const) {
    const backend = scripted([reply]);
    let generated = 0;
    const generate = backend.generate.bind(backend);
    backend.generate = async (req) => generate(req).finally(() => (generated = performance.now()));
    await withGateway(backend, async (client) => {
      const messages = [{ role: 'user' as const, content: '2+2?' }];
      const stream = await client.chat.completions.create({
        model: 'm',
        messages,
        tools: [...tools],
        stream: true,
        seed: 1,
      });
      const arrivals: [number, string][] = [];
      const calls: string[] = [];
      for await (const chunk of stream) {
        const delta = chunk.choices[0]?.delta;
        if (delta?.content) arrivals.push([performance.now(), delta.content]);
        for (const c of delta?.tool_calls ?? []) calls.push(c.function?.name ?? '');
      }
      assert.ok(arrivals.length >= (tools.length ? 1 : 5), `content in ${arrivals.length} chunks`);
      assert.ok(arrivals[0]![0] < generated, 'the first text arrives while the model is still writing');
      const whole = (await client.chat.completions.create({ model: 'm', messages, tools: [...tools], seed: 1 }))
        .choices[0]!.message;
      assert.equal(arrivals.map(([, text]) => text).join(''), whole.content ?? '');
      assert.deepEqual(
        calls,
        (whole.tool_calls ?? []).map((c) => (c.type === 'function' ? c.function.name : '')),
      );
    });
  }
});
