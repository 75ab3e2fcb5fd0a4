import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CHATML, COMPACT_CHAT } from '../../../src/agent/chat-format.ts';
import { ContextBuilder, tokenizeMessages } from '../../../src/agent/context.ts';
import { Episode } from '../../../src/agent/episode.ts';
import { TEMPLATES } from '../../../src/agent/templates.ts';
import { createEnv, resolveEnvConfig } from '../../../src/envs/registry.ts';
import { StarpoError } from '../../../src/errors.ts';
import { charTokenizer } from './char-tokenizer.ts';

function playedMessages(template: 'full' | 'compact', responses: string[]) {
  const config = resolveEnvConfig('sokoban');
  const episode = new Episode(createEnv(config), config, TEMPLATES[template]);
  episode.start(0);
  for (const r of responses) episode.respond(r);
  return episode.messages;
}

/** Expected mask from the rendered text alone: 1 inside each match of `span`'s group 1 (needs the d flag). */
function maskFromText(chars: string[], span: RegExp): number[] {
  const text = chars.join('');
  const mask = new Array<number>(chars.length).fill(0);
  for (const m of text.matchAll(span)) {
    const [from, to] = m.indices![1]!;
    const start = Array.from(text.slice(0, from)).length;
    for (let i = 0; i < Array.from(text.slice(from, to)).length; i++) mask[start + i] = 1;
  }
  return mask;
}

test('full template: the mask is 1 exactly on the assistant-written tokens, token by token', () => {
  const responses = [
    '<think>push</think><answer>Down || Down</answer>',
    '<think>go</think><answer>Right || Fly</answer>',
  ];
  const tok = charTokenizer();
  const ctx = tokenizeMessages(playedMessages('full', responses), tok, CHATML);
  const chars = Array.from(tok.decode(ctx.ids));
  assert.equal(chars.length, ctx.ids.length);
  assert.deepEqual(ctx.mask, maskFromText(chars, /<\|im_start\|>assistant\n(.*?)<\|im_end\|>/dgs));
  const written = ctx.ids.filter((_, i) => ctx.mask[i] === 1);
  assert.equal(tok.decode(written), responses.join(''));
  assert.deepEqual(
    ctx.turnEnds.map((i) => chars[i]),
    ['>', '>'],
  );
  assert.deepEqual(
    ctx.turnEnds.map((i) => chars.slice(i + 1, i + 11).join('')),
    ['<|im_end|>', '<|im_end|>'],
  );
});

test('compact template: the mask is 1 exactly on the answers, and on the stop when it is trained', () => {
  const responses = ['D|D', 'R|x'];
  for (const trainStop of [false, true]) {
    const tok = charTokenizer();
    const ctx = tokenizeMessages(playedMessages('compact', responses), tok, COMPACT_CHAT, trainStop);
    const chars = Array.from(tok.decode(ctx.ids));
    const span = trainStop ? /(?:^|\n)>([^\n]*\n)/dg : /(?:^|\n)>([^\n]*)/dg;
    assert.deepEqual(ctx.mask, maskFromText(chars, span));
    assert.equal(
      ctx.mask.reduce((a, b) => a + b, 0),
      trainStop ? 8 : 6,
    );
    assert.deepEqual(
      ctx.turnEnds.map((i) => chars[i]),
      trainStop ? ['\n', '\n'] : ['D', 'x'],
    );
  }
});

test('building turn by turn gives the same tokens as tokenising the finished conversation', () => {
  const messages = playedMessages('full', ['<think>a</think><answer>Down</answer>']);
  const tok = charTokenizer();
  const builder = new ContextBuilder(tok, CHATML);
  builder.addSystem(messages[0]!.content);
  builder.addUser(messages[1]!.content);
  const prompt = builder.beginResponse();
  assert.ok(tok.decode(prompt).endsWith('<|im_start|>assistant\n'));
  builder.addResponse(tok.encode(messages[2]!.content + '<|im_end|>'), true);
  builder.addUser(messages[3]!.content, 'observation');
  const whole = tokenizeMessages(messages, tok, CHATML, true);
  assert.deepEqual(builder.build(), whole);
  assert.equal(whole.promptLength, prompt.length);
});

test('a response cut at the length limit gets the stop appended as template (mask 0)', () => {
  const tok = charTokenizer();
  const builder = new ContextBuilder(tok, COMPACT_CHAT);
  builder.addUser('s');
  builder.beginResponse();
  builder.addResponse(tok.encode('UU'), false);
  const ctx = builder.build();
  assert.deepEqual([tok.decode(ctx.ids), ctx.mask, ctx.turnEnds], ['s\n>UU\n', [0, 0, 0, 1, 1, 0], [4]]);
});

test('an empty response records no reward position', () => {
  const builder = new ContextBuilder(charTokenizer(), COMPACT_CHAT);
  builder.beginResponse();
  builder.addResponse([], false);
  assert.deepEqual(builder.build().turnEnds, [-1]);
});

test('out-of-order calls are refused', () => {
  const builder = new ContextBuilder(charTokenizer(), CHATML);
  assert.throws(() => builder.addResponse([1], true), StarpoError);
  builder.beginResponse();
  assert.throws(() => builder.addUser('x'), StarpoError);
  assert.throws(() => builder.build(), StarpoError);
});
