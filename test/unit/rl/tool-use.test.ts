/**
 * Tool use in the trainer: config rules, tool demonstrations (token for token what a rollout of the
 * same text gives), the rollout stage's tool reward and the tool metrics of an iteration.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveConfig } from '../../../src/rl/config.ts';
import { iterationMetrics } from '../../../src/rl/stages/advantage.ts';
import { rolloutStage } from '../../../src/rl/stages/rollout.ts';
import { trainSeed } from '../../../src/rl/seeds.ts';
import { assemble } from '../../../src/rl/assemble.ts';
import { rollout } from '../../../src/rl/rollout.ts';
import { type GenerationBackend } from '../../../src/policy/engine/handle.ts';
import { demonstrations } from '../../../src/rl/sft.ts';
import { toolTurns } from '../../../src/rl/tool-use.ts';
import { COMPACT_CHAT } from '../../../src/agent/chat-format.ts';
import { TEMPLATES } from '../../../src/agent/templates.ts';
import { scratchTokenizer } from '../../../src/rl/vocabulary.ts';
import { libraryTask, type LibraryConfig } from '../../../src/envs/library/index.ts';
import { resolveEnvConfig } from '../../../src/envs/registry.ts';
import { toolmathProblem, type ToolmathConfig } from '../../../src/envs/toolmath/index.ts';
import { toolExpertEpisode, withRepeats } from '../../../src/tools/expert.ts';
import { TOOL_FORMATS } from '../../../src/tools/formats.ts';
import type { CodeRunner } from '../../../src/tools/sandbox/pool.ts';
import { Prng } from '../../../src/envs/prng.ts';
import { ConfigError } from '../../../src/errors.ts';
import { writer } from '../tools/scripted.ts';
import { envEpisodes } from '../../../src/rl/episode-source.ts';

const tokenizer = scratchTokenizer();
const text = { tokenizer, chat: COMPACT_CHAT };
const STOP = '<|im_end|>';

/** Prints the answer of each problem's solution code, as the sandbox would (tested for real in integration). */
function solutions(config: ToolmathConfig, seeds: number[]): CodeRunner {
  const answers = new Map(seeds.map((s) => toolmathProblem(config, s)).map((p) => [p.code, p.answer]));
  return {
    run: async (code) =>
      answers.has(code)
        ? { ok: true, output: `${answers.get(code)}\n` }
        : { ok: false, output: '', error: 'x', errorKind: 'runtime' },
    reset: async () => {},
    close: async () => {},
  };
}

/** A backend that replays, row by row, the model-written text of a demonstration (its mask-1 tokens). */
function replayOf(texts: Map<string, string>): GenerationBackend {
  const cursors = new Map<string, number>();
  return {
    async generate(req) {
      return req.prompts.map((ids) => {
        const prompt = tokenizer.decode(ids);
        const [key, script] = [...texts.entries()].find(([k]) => prompt.startsWith(k))!;
        let at = cursors.get(key) ?? 0;
        let out = '';
        while (at < script.length && !req.stopStrings.some((s) => out.endsWith(s))) out += script[at++];
        cursors.set(key, at);
        const tokens = tokenizer.encode(out);
        return { tokens, logprobs: tokens.map(() => -1), finishReason: 'stop' as const };
      });
    },
  };
}

test('tool runs: formats that cannot work, environments without functions or ground truth are refused by field', () => {
  const bad = (overrides: string[], field: string, pattern: RegExp) =>
    assert.throws(
      () => resolveConfig({ overrides }),
      (err: unknown) => err instanceof ConfigError && err.field === field && pattern.test(err.message),
    );
  bad(['env=toolmath', 'template=compact', 'tools=code-fence'], 'tools', /turn stop "\\n".*compact/);
  bad(['env=sokoban', 'tools=function-call', 'template=full'], 'tools', /sokoban.*no functions/);
  bad(['env=toolmath', 'toolReward=toolrl'], 'toolReward', /ground truth.*toolmath/);
  bad(['tools=python'], 'tools', /one of|must be/);
  assert.equal(
    resolveConfig({ overrides: ['env=toolmath', 'template=compact', 'tools=code-inline', 'toolReward=otc'] }).tools,
    'code-inline',
  );
});

test('withRepeats inserts each repeat right after the call it repeats, 0..extra of them', () => {
  const a = { kind: 'code' as const, language: 'js', code: 'a' };
  const b = { kind: 'code' as const, language: 'js', code: 'b' };
  const counts = new Set<number>();
  for (let s = 0; s < 200; s++) {
    const out = withRepeats([a, b], 2, new Prng(s));
    counts.add(out.length - 2);
    assert.deepEqual(
      out.filter((c, i) => i === 0 || c !== out[i - 1]),
      [a, b],
    );
  }
  assert.deepEqual([...counts].sort(), [0, 1, 2]);
});

test('a code demonstration is exactly the rollout of its own written text: ids, loss mask, answer', async () => {
  const config = resolveEnvConfig('toolmath') as ToolmathConfig;
  const seeds = [3, 4, 5];
  const code = solutions(config, seeds);
  const scripts = new Map<string, string>();
  const demos: Awaited<ReturnType<typeof toolExpertEpisode>>[] = [];
  for (const seed of seeds) {
    const demo = await toolExpertEpisode(config, seed, 'compact', tokenizer, {
      format: TOOL_FORMATS['code-inline'],
      code,
      maxCalls: 3,
      extraCalls: 2,
    });
    demos.push(demo);
    scripts.set(
      `=/1\n${toolmathProblem(config, seed).text}`,
      tokenizer.decode(demo.ids.filter((_, i) => demo.mask[i] === 1)),
    );
  }
  const turnGenerator = toolTurns(
    resolveConfig({ overrides: ['env=toolmath', 'tools=code-inline', 'toolMaxCalls=3'] }),
    tokenizer,
    code,
  )!;
  const played = await rollout(
    {
      env: config,
      template: 'compact',
      chat: COMPACT_CHAT,
      seeds,
      groupSize: 1,
      temperature: 1,
      maxResponseTokens: 800,
      maxContext: 4000,
      samplingSeed: 0,
      turnGenerator,
    },
    replayOf(scripts),
    tokenizer,
  );
  for (const [i, t] of played.entries()) {
    assert.deepEqual(t.ids.slice(0, demos[i].ids.length), demos[i].ids);
    assert.deepEqual(t.mask.slice(0, demos[i].mask.length), demos[i].mask);
    assert.equal(t.success, true);
    assert.equal(t.turns[0].toolCalls!.length, demos[i].record.messages[1].content.split('```js').length - 1);
  }
  const text = tokenizer.decode(demos[0].ids);
  const p = toolmathProblem(config, 3);
  assert.ok(text.includes(`\`\`\`js ${p.code}\`\`\`\`\`\`output ${p.answer}\`\`\``), text);
  assert.ok(text.endsWith(`\\boxed{${p.answer}}\nr1\n`), text);
  const written = tokenizer.decode(demos[0].ids.filter((_, i) => demos[0].mask[i] === 1));
  assert.ok(!written.includes('output'), 'tool results are never trained');
});

test('the warm-start of a function-calling run: every question answered after its ground-truth calls', async () => {
  const c = resolveConfig({
    overrides: [
      'env=library',
      'template=full',
      'tools=function-call',
      'sftEpisodes=4',
      'modelContext=8192',
      'maxResponseTokens=2000',
    ],
  });
  const demos = await demonstrations(c, text);
  assert.equal(demos.length, 4);
  for (const d of demos) {
    const { questions } = libraryTask(resolveEnvConfig('library') as LibraryConfig, d.record.seed);
    assert.equal(d.record.success, true);
    const answers = d.record.messages.filter((m) => m.role === 'assistant').map((m) => m.content);
    answers.forEach((a, k) => {
      const calls = [...a.matchAll(/<tool_call>(.*?)<\/tool_call>/g)].map((m) => JSON.parse(m[1]));
      assert.deepEqual(calls, questions[k].expectedCalls);
      assert.ok(a.endsWith(`<answer>${questions[k].answer}</answer>`) || a.includes(questions[k].answer), a);
    });
    const masked = tokenizer.decode(d.ids.filter((_, i) => d.mask[i] === 0));
    assert.ok(masked.includes('<tool_response>'), 'results are in the context, masked out');
    assert.ok(!tokenizer.decode(d.ids.filter((_, i) => d.mask[i] === 1)).includes('<tool_response>'));
  }
});

test('the rollout stage scores whole groups with the tool reward; the iteration reports tool metrics', async () => {
  const c = resolveConfig({
    overrides: [
      'env=library',
      'template=full',
      'tools=function-call',
      'toolReward=tool-n1',
      'envGroups=2',
      'groupSize=2',
      'advantage=grpo',
      'critic=false',
      'filter=none',
      'miniBatchSize=4',
      'modelContext=8192',
      'maxResponseTokens=400',
    ],
  });
  const env = resolveEnvConfig('library') as LibraryConfig;
  const tasks = [0, 1].map((g) => libraryTask(env, trainSeed(c, 1, g)));
  // Group 0 makes exactly the ground-truth calls; group 1 skips the first call of each question.
  const policy = writer(tokenizer, (prompt) => {
    const g = tasks.findIndex((t) => prompt.includes(t.questions[0].question));
    const q = tasks[g].questions.filter((x) => prompt.includes(x.question)).pop()!;
    const calls = q.expectedCalls
      .slice(g)
      .map((x) => `<tool_call>${JSON.stringify(x)}</tool_call>`)
      .join('');
    return `<think>look it up</think>${calls}<answer>${q.answer}</answer>${STOP}`;
  });
  const text = { tokenizer, chat: TEMPLATES.full.chat };
  const trajectories = await rolloutStage(c, 1, envEpisodes(c, policy, text, toolTurns(c, tokenizer)));
  assert.deepEqual(
    trajectories.map((t) => t.return),
    [1, 1, 0, 0],
  );
  for (const t of trajectories) {
    assert.deepEqual(
      t.turns.map((x) => x.envReward),
      [0, 0, t.return],
    );
    assert.ok(t.turns.every((x) => x.formatPenalty === 0));
  }
  const all = assemble(trajectories);
  const calls = trajectories.map((t) => t.turns.flatMap((x) => x.toolCalls ?? []).length);
  const m = iterationMetrics({
    c,
    trajectories,
    all,
    kept: all.batch,
    keptGroupIds: [],
    adv: { advantages: new Float32Array(0), returns: null, metrics: {} },
    stageMetrics: [],
  });
  assert.equal(
    m['tool/calls'],
    calls.reduce((a, b) => a + b, 0),
  );
  assert.equal(m['tool/calls_per_response'], m['tool/calls'] / 4);
  assert.equal(m['tool/success_rate'], 1);
  assert.equal(m['tool/productivity'], trajectories.filter((t) => t.success).length / m['tool/calls']);
});
