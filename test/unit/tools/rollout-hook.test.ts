/**
 * The rollout's turn-generator hook with tool turns: whole rollouts on toolmath (code calls) and the
 * library (function calls) with a scripted policy, checked token by token against the loss mask.
 */
import { TEMPLATES } from '../../../src/agent/templates.ts';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rollout, type RolloutSpec } from '../../../src/rl/rollout.ts';
import { type GenerationBackend } from '../../../src/policy/engine/handle.ts';
import { resolveEnvConfig } from '../../../src/envs/registry.ts';
import { toolmathProblem, type ToolmathConfig } from '../../../src/envs/toolmath/index.ts';
import { libraryTask, type LibraryConfig } from '../../../src/envs/library/index.ts';
import { toolTurnGenerator } from '../../../src/tools/rollout-hook.ts';
import type { CodeRunner } from '../../../src/tools/sandbox/pool.ts';
import { charTokenizer } from '../agent/char-tokenizer.ts';
import { HEADER, RESULT_BLOCK, scriptedBackend, writer } from './scripted.ts';

const tokenizer = charTokenizer();
const STOP = '<|im_end|>';

/** '1' on chars the model wrote (assistant turns without result blocks, stop included), '0' elsewhere. */
function expectedMask(text: string): string {
  let mask = '';
  let at = 0;
  for (let h = text.indexOf(HEADER); h >= 0; h = text.indexOf(HEADER, at)) {
    const start = h + HEADER.length;
    const end = text.indexOf(STOP, start) + STOP.length;
    const turn = text.slice(start, end).replace(RESULT_BLOCK, (b) => '\u0000'.repeat(b.length));
    mask += '0'.repeat(start - at) + turn.replace(/[^\u0000]/g, '1').replace(/\u0000/g, '0');
    at = end;
  }
  return mask + '0'.repeat(text.length - at);
}

const fakeSandbox = (answers: Map<string, string>): CodeRunner => ({
  run: async (code) => ({ ok: true, output: `${answers.get(code) ?? ''}\n` }),
  reset: async () => {},
  close: async () => {},
});

function spec(env: RolloutSpec['env'], seeds: number[], extra: Partial<RolloutSpec> = {}): RolloutSpec {
  return {
    env,
    template: 'full',
    chat: TEMPLATES.full.chat,
    seeds,
    groupSize: 1,
    temperature: 1,
    maxResponseTokens: 400,
    maxContext: 20000,
    samplingSeed: 0,
    ...extra,
  };
}

test('toolmath: code runs mid-turn, the answer after it succeeds, only model-written tokens are trained', async () => {
  const config = resolveEnvConfig('toolmath') as ToolmathConfig;
  const problems = [0, 1].map((seed) => toolmathProblem(config, seed));
  const policy = writer(tokenizer, (prompt) => {
    const p = problems.find((x) => prompt.includes(x.text))!;
    return `<think>use code</think>\n\`\`\`js\n${p.code}\n\`\`\`\n<answer>\\boxed{${p.answer}}</answer>${STOP}`;
  });
  const turnGenerator = toolTurnGenerator({
    format: 'code-fence',
    maxCalls: 2,
    tokenizer,
    code: fakeSandbox(new Map(problems.map((p) => [p.code, p.answer]))),
  });
  const trajectories = await rollout(spec(config, [0, 1], { turnGenerator }), policy, tokenizer);
  for (const [i, t] of trajectories.entries()) {
    const text = tokenizer.decode(t.ids);
    assert.ok(text.includes(`\`\`\`output\n${problems[i].answer}\n\`\`\`\n`));
    assert.equal(t.mask.join(''), expectedMask(text));
    assert.deepEqual([t.success, t.return], [true, 1]);
    assert.equal(t.turns[0].response, `<think>use code</think>\n<answer>\\boxed{${problems[i].answer}}</answer>`);
    assert.deepEqual(
      t.turns[0].toolCalls?.map((c) => [c.name, c.ok, c.shown]),
      [['js', true, problems[i].answer]],
    );
    assert.ok(t.logprobs.every((lp, k) => (t.mask[k] === 1 ? lp === -0.5 : lp === 0)));
    assert.equal(t.mask[t.turns[0].rewardPosition], 1);
  }
});

test('library: three turns of function calls with responses masked out, every answer right', async () => {
  const config = resolveEnvConfig('library') as LibraryConfig;
  const { questions } = libraryTask(config, 0);
  const policy = writer(tokenizer, (prompt) => {
    const q = questions.filter((x) => prompt.includes(x.question)).pop()!;
    const calls = q.expectedCalls.map((c) => `<tool_call>${JSON.stringify(c)}</tool_call>`).join('');
    return `<think>look it up</think>${calls}<answer>${q.answer}</answer>${STOP}`;
  });
  const turnGenerator = toolTurnGenerator({ format: 'function-call', maxCalls: 4, tokenizer });
  const [t] = await rollout(spec(config, [0], { turnGenerator }), policy, tokenizer);
  const text = tokenizer.decode(t.ids);
  assert.equal(t.mask.join(''), expectedMask(text));
  assert.deepEqual([t.turns.length, t.success, t.return], [3, true, 3]);
  const names = questions.map((q) => q.expectedCalls.map((c) => c.name));
  assert.deepEqual(
    t.turns.map((x) => x.toolCalls?.map((c) => c.name)),
    names,
  );
  assert.ok(text.includes('<tool_response>{"days_late":5,"fee_cents":125}</tool_response>'));
  assert.ok(t.turns.every((x) => x.toolCalls?.every((c) => c.ok)));
});

test('without a turn generator the rollout is unchanged: no tool calls recorded, nothing masked out', async () => {
  const config = resolveEnvConfig('toolmath') as ToolmathConfig;
  const p = toolmathProblem(config, 0);
  const policy = writer(tokenizer, () => `<think>guess</think><answer>\\boxed{${p.answer}}</answer>${STOP}`);
  const [t] = await rollout(spec(config, [0]), policy, tokenizer);
  assert.equal(t.turns[0].toolCalls, undefined);
  assert.equal(t.mask.join(''), expectedMask(tokenizer.decode(t.ids)));
  assert.equal(t.success, true);
});

test('the compact template with inline code: the tiny-model path ends at the newline after the answer', async () => {
  const config = resolveEnvConfig('toolmath') as ToolmathConfig;
  const p = toolmathProblem(config, 0);
  const script = `\`\`\`js ${p.code}\`\`\`\\boxed{${p.answer}}\n`;
  const backend = scriptedBackend(tokenizer, new Map([[`=/1\n${p.text}`, script]]));
  const turnGenerator = toolTurnGenerator({
    format: 'code-inline',
    maxCalls: 1,
    tokenizer,
    code: fakeSandbox(new Map([[p.code, p.answer]])),
  });
  const policy: GenerationBackend = { generate: (r) => backend.generate(r) };
  const [t] = await rollout(
    spec(config, [0], { template: 'compact', chat: TEMPLATES.compact.chat, turnGenerator }),
    policy,
    tokenizer,
  );
  const text = tokenizer.decode(t.ids);
  const block = `\`\`\`output ${p.answer}\`\`\``;
  assert.equal(text, `=/1\n${p.text}\n1\n>\`\`\`js ${p.code}\`\`\`${block}\\boxed{${p.answer}}\nr1\n`);
  const start = text.indexOf('>') + 1;
  const mask =
    '0'.repeat(start) +
    '1'.repeat(script.indexOf('\\boxed')) +
    '0'.repeat(block.length) +
    '1'.repeat(script.length - script.indexOf('\\boxed')) +
    '0'.repeat('r1\n'.length);
  assert.equal(t.mask.join(''), mask);
  assert.deepEqual([t.success, t.turns[0].response], [true, `\\boxed{${p.answer}}`]);
});
