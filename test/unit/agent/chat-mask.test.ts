/**
 * Loss masks and token owners with the models' own templates (real Qwen3 and Llama 3 tokenizers): every
 * token is labelled, only what the model wrote carries loss, and the sampled ids are kept as sampled.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TOKEN_ROLES } from '../../../src/agent/chat-format.ts';
import { chatTemplateFrom } from '../../../src/agent/chat-template.ts';
import { ContextBuilder } from '../../../src/agent/context.ts';
import { Episode } from '../../../src/agent/episode.ts';
import { jinjaChatFormat } from '../../../src/agent/jinja-format.ts';
import { TEMPLATES } from '../../../src/agent/templates.ts';
import { createEnv, resolveEnvConfig } from '../../../src/envs/registry.ts';
import { type RealTokenizerName, realTokenizer, realTokenizerConfig } from './real-tokenizers.ts';

const EOS: Record<RealTokenizerName, number[]> = { qwen3: [151645, 151643], llama3: [128001, 128009] };

function format(name: RealTokenizerName, enableThinking?: boolean) {
  const template = chatTemplateFrom(realTokenizerConfig(name))!;
  return jinjaChatFormat({ name, template, tokenizer: realTokenizer(name), eosTokenIds: EOS[name], enableThinking });
}

/** Plays Sokoban with fixed responses through a ContextBuilder, as the rollout does. */
function play(name: RealTokenizerName, responses: { ids: number[]; wroteStop: boolean }[], enableThinking?: boolean) {
  const tok = realTokenizer(name);
  const chat = format(name, enableThinking);
  const config = resolveEnvConfig('sokoban');
  const episode = new Episode(createEnv(config), config, TEMPLATES.full);
  const ctx = new ContextBuilder(tok, chat);
  for (const m of episode.start(3)) ctx.addMessage(m);
  const observations: string[] = [];
  for (const r of responses) {
    ctx.beginResponse();
    ctx.addResponse(r.ids, r.wroteStop);
    const text = tok.decode(r.ids);
    const turn = episode.respond(r.wroteStop ? text.slice(0, -chat.stop.length) : text);
    ctx.addUser(turn.userMessage, 'observation');
    observations.push(turn.userMessage);
    if (episode.done) break;
  }
  return { ctx: ctx.build(), episode, observations, chat, tok };
}

const decodeRole = (tok: ReturnType<typeof realTokenizer>, ids: number[], roles: number[], role: string) =>
  tok.decode(ids.filter((_, i) => TOKEN_ROLES[roles[i]] === role));

for (const name of ['qwen3', 'llama3'] as const) {
  test(`${name}: every token is labelled, only assistant tokens carry loss, and each owner's text is exact`, () => {
    const tok = realTokenizer(name);
    const stopId = EOS[name][name === 'qwen3' ? 0 : 1];
    const answer = tok.encode('<think>push the box</think><answer>Right || Down</answer>');
    const cut = tok.encode('<think>I wonder');
    const { ctx, episode, observations } = play(name, [
      { ids: [...answer, stopId], wroteStop: true },
      { ids: cut, wroteStop: false },
    ]);
    assert.equal(ctx.roles.length, ctx.ids.length);
    ctx.mask.forEach((m, i) => assert.equal(m, TOKEN_ROLES[ctx.roles[i]] === 'assistant' ? 1 : 0, `token ${i}`));
    assert.deepEqual(
      ctx.ids.filter((_, i) => ctx.mask[i] === 1),
      [...answer, stopId, ...cut],
    );
    const [system, first] = episode.messages;
    assert.equal(decodeRole(tok, ctx.ids, ctx.roles, 'system'), system.content);
    assert.equal(decodeRole(tok, ctx.ids, ctx.roles, 'user'), first.content);
    assert.equal(decodeRole(tok, ctx.ids, ctx.roles, 'observation'), observations.join(''));
    assert.ok(decodeRole(tok, ctx.ids, ctx.roles, 'template').length > 0);
    assert.deepEqual(ctx.turnEnds, [ctx.ids.indexOf(stopId, ctx.promptLength), ctx.mask.lastIndexOf(1)]);
  });

  test(`${name}: token-in/token-out keeps sampled ids that are not the text's own tokenisation`, () => {
    const tok = realTokenizer(name);
    const pieces = ['<answer>', 'Ri', 'ght', '</answer>'].flatMap((p) => tok.encode(p));
    assert.notDeepEqual(pieces, tok.encode('<answer>Right</answer>'));
    const { ctx } = play(name, [{ ids: pieces, wroteStop: false }]);
    assert.deepEqual(
      ctx.ids.filter((_, i) => ctx.mask[i] === 1),
      pieces,
    );
  });
}

test('llama3: turn-by-turn tokens equal the template rendering of the finished conversation', () => {
  const tok = realTokenizer('llama3');
  const turn = tok.encode('<think>go</think><answer>Up</answer>');
  const { ctx, episode } = play('llama3', [
    { ids: [...turn, 128009], wroteStop: true },
    { ids: [...turn, 128009], wroteStop: true },
  ]);
  const template = chatTemplateFrom(realTokenizerConfig('llama3'))!;
  assert.equal(episode.messages.length, 6);
  // (The bundled Llama 3 template ends every rendering with an assistant header, the builder's too.)
  assert.deepEqual(ctx.ids, tok.encode(template.render(episode.messages, { addGenerationPrompt: false })));
});

test('qwen3 with enable_thinking false: the empty think block of the header is template, not trained', () => {
  const tok = realTokenizer('qwen3');
  const { ctx } = play('qwen3', [{ ids: [...tok.encode('<answer>Up</answer>'), 151645], wroteStop: true }], false);
  const prompt = tok.decode(ctx.ids.slice(0, ctx.promptLength));
  assert.ok(prompt.endsWith('<|im_start|>assistant\n<think>\n\n</think>\n\n'), JSON.stringify(prompt.slice(-60)));
  assert.equal(
    ctx.mask.slice(0, ctx.promptLength).reduce((a, b) => a + b, 0),
    0,
  );
  assert.ok(tok.decode(ctx.ids).includes('<|im_end|>\n<|im_start|>user\nReward:'));
});

test('qwen3: equal to the template rendering without reasoning; with reasoning the turns keep it (the template would drop it)', () => {
  const tok = realTokenizer('qwen3');
  const template = chatTemplateFrom(realTokenizerConfig('qwen3'))!;
  for (const think of [false, true]) {
    const text = `${think ? '<think>box left</think>' : ''}<answer>Up</answer>`;
    const turn = [...tok.encode(text), 151645];
    const { ctx, episode } = play('qwen3', [
      { ids: turn, wroteStop: true },
      { ids: turn, wroteStop: true },
    ]);
    const rendered = tok.encode(template.render(episode.messages, { addGenerationPrompt: false }));
    if (!think) assert.deepEqual(ctx.ids, rendered);
    else {
      assert.equal(ctx.ids.length - rendered.length, 2 * tok.encode('<think>box left</think>').length);
      assert.equal(tok.decode(ctx.ids).split('<think>box left</think>').length, 3);
    }
  }
});
