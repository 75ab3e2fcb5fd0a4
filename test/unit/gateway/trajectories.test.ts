import { test } from 'node:test';
import assert from 'node:assert/strict';
import { roleCode } from '../../../src/agent/chat-format.ts';
import { complete } from '../../../src/gateway/completion.ts';
import { Episode } from '../../../src/gateway/episodes.ts';
import { parseChatRequest } from '../../../src/gateway/request.ts';
import { episodeTrajectories } from '../../../src/gateway/trajectories.ts';
import { CALC_TOOL, IM_END, scripted, settingsFor, tokenizer } from './fixtures.ts';

const CALL = '<tool_call>\n{"name": "calc", "arguments": {"expr": "1+2"}}\n</tool_call><|im_end|>';
const ask = (messages: unknown[], extra: Record<string, unknown> = {}) =>
  parseChatRequest({ messages, tools: [CALC_TOOL], ...extra });
const trained = (t: { ids: number[]; mask: number[] }) => t.ids.filter((_, i) => t.mask[i] === 1);
const user = { role: 'user', content: 'What is 1+2?' };

test("a call repeating the last call's messages and reply extends its trajectory: loss exactly on the sampled", async () => {
  const backend = scripted([CALL, 'It is 3.<|im_end|>']);
  const s = settingsFor(backend);
  const e = new Episode('e', 'k');
  const first = await complete(s, e, ask([user]));
  const result = { role: 'tool', tool_call_id: first.reply.tool_calls![0].id, content: '3' };
  await complete(s, e, ask([user, first.reply, result]));
  const [t, ...rest] = episodeTrajectories(e.calls, 'prefix', { reward: 1, success: null });
  assert.equal(rest.length, 0);
  assert.deepEqual(trained(t), [...backend.sampled[0], ...backend.sampled[1]]);
  const [p0, s0] = [backend.prompts[0], backend.sampled[0]];
  assert.deepEqual(backend.prompts[1].slice(0, p0.length + s0.length), [...p0, ...s0]);
  assert.deepEqual(t.ids, [...backend.prompts[1], ...backend.sampled[1]]);
  const turns = t.turns.map((x) => [x.envReward, x.parsedActions, x.rewardPosition]);
  assert.deepEqual(turns, [
    [0, ['calc'], p0.length + s0.length - 1],
    [1, [], t.ids.length - 1],
  ]);
  assert.deepEqual([t.return, t.success], [1, true]);
});

test('a client sending back another reply than the model wrote starts a new trajectory, flagged diverged', async () => {
  const backend = scripted(['<think>\nhm\n</think>\n\nFour.<|im_end|>', 'Three.<|im_end|>']);
  const s = settingsFor(backend);
  const e = new Episode('e', 'k');
  await complete(s, e, ask([user]));
  const edited = { role: 'assistant', content: 'Four.' };
  const second = await complete(s, e, ask([user, edited, { role: 'user', content: 'Sure?' }]));
  assert.deepEqual([second.call.parent, second.call.diverged], [null, true]);
  const ts = episodeTrajectories(e.calls, 'prefix', { reward: null, success: null });
  assert.equal(ts.length, 2);
  assert.equal(tokenizer.decode(ts[1].ids).split('<|im_start|>assistant\n').length, 3, 'the template renders the edit');
  assert.deepEqual(trained(ts[1]), backend.sampled[1]);
});

test('two calls continuing one reply: the second branch trains only its own tokens, the history is context', async () => {
  const backend = scripted(['A.<|im_end|>', 'B.<|im_end|>', 'C.<|im_end|>']);
  const s = settingsFor(backend);
  const e = new Episode('e', 'k');
  const first = await complete(s, e, ask([user]));
  const branch = (text: string) => complete(s, e, ask([user, first.reply, { role: 'user', content: text }]));
  await branch('left');
  await branch('right');
  const ts = episodeTrajectories(e.calls, 'prefix', { reward: 1, success: null });
  assert.deepEqual(ts.map(trained), [[...backend.sampled[0], ...backend.sampled[1]], backend.sampled[2]]);
  const untrainedAssistant = ts[1].roles.some((r, i) => r === roleCode('assistant') && ts[1].mask[i] === 0);
  assert.ok(!untrainedAssistant, "no untrained token is the assistant's");
  assert.deepEqual(
    ts.map((t) => t.return),
    [1, 1],
  );
});

test("transition: a trajectory per call; a call's reward stays on its call, the episode's on each last turn", async () => {
  const backend = scripted(['A.<|im_end|>', 'B.<|im_end|>']);
  const s = settingsFor(backend);
  const e = new Episode('e', 'k');
  const first = await complete(s, e, ask([user]));
  await complete(s, e, ask([user, first.reply, { role: 'user', content: 'more' }]));
  e.setReward(0.5, { callId: first.call.id });
  e.setReward(2, { success: false });
  const ts = episodeTrajectories(e.calls, 'transition', e);
  assert.deepEqual(
    ts.map((t) => [t.turns.length, t.return, t.success]),
    [
      [1, 2.5, false],
      [1, 2, false],
    ],
  );
  assert.deepEqual(ts[1].ids.slice(0, backend.prompts[1].length), backend.prompts[1]);
});

test('a reply cut at max_tokens gets the close as template; a stop sequence cuts the content, not the tokens', async () => {
  const backend = scripted(['one two three four five six<|im_end|>', 'ok<|im_end|>']);
  const s = settingsFor(backend);
  const e = new Episode('e', 'k');
  const first = await complete(s, e, ask([user], { max_tokens: 3, stop: ' two' }));
  assert.deepEqual([first.reply.content, first.finishReason, first.call.wroteStop], ['one', 'length', false]);
  await complete(s, e, ask([user, first.reply, { role: 'user', content: 'go on' }]));
  const after = backend.prompts[1].slice(backend.prompts[0].length + 3);
  assert.equal(after[0], IM_END, "the close the model did not write is the template's");
});

test("a reply ended by another eos than the template's stop is still closed by the template", async () => {
  const backend = scripted(['Done.<|endoftext|>', 'ok<|im_end|>']);
  const s = settingsFor(backend);
  const e = new Episode('e', 'k');
  const first = await complete(s, e, ask([user]));
  assert.deepEqual([first.reply.content, first.finishReason, first.call.wroteStop], ['Done.', 'stop', false]);
  await complete(s, e, ask([user, first.reply, { role: 'user', content: 'go on' }]));
  const after = tokenizer.decode(backend.prompts[1].slice(backend.prompts[0].length));
  assert.ok(after.startsWith('Done.<|endoftext|><|im_end|>\n<|im_start|>user\ngo on'), after);
});
