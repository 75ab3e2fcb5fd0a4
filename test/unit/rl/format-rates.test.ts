import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rollout } from '../../../src/rl/rollout.ts';
import { type GenerationBackend } from '../../../src/policy/engine/handle.ts';
import { COMPACT_CHAT } from '../../../src/agent/chat-format.ts';
import { scratchTokenizer } from '../../../src/rl/vocabulary.ts';
import { resolveEnvConfig } from '../../../src/envs/index.ts';
import { ECHO_CHARS, echoesPrompt, formatRates } from '../../../src/rl/format-rates.ts';

const tokenizer = scratchTokenizer();

test('an echo is a verbatim run of ECHO_CHARS characters of the prompt, whitespace runs counted as one', () => {
  const prompt = 'Turn 1:\nState:\n#####\n#_P_#\n#_X_#\n#####\nYou have 10 actions left. Always output: <answer>';
  assert.equal(echoesPrompt('State:\n#####\n#_P_#\n#_X_#\n#####\nYou have', prompt), true);
  assert.equal(echoesPrompt('State: #####   #_P_# #_X_#\t##### You have', prompt), true);
  assert.equal(echoesPrompt('<answer>Up</answer>', prompt), false); // shorter than any echo
  assert.equal(echoesPrompt('#_P_# #_X_# #####', prompt), true); // nothing but a piece of the prompt
  assert.equal(echoesPrompt('#_P_# #_X_# #####!', prompt), false);
  const run = prompt.slice(prompt.length - ECHO_CHARS);
  assert.equal(echoesPrompt(`I see ${run} and more`, prompt), true);
  assert.equal(echoesPrompt(`I see ${run.slice(1)} and more`, prompt), false);
});

test('format rates over a rollout: turns with a parsed action, cut at the token limit, echoing the prompt', async () => {
  // Row 0 answers well, row 1 copies its prompt until the token limit cuts it, row 2 writes no action.
  const backend: GenerationBackend = {
    async generate(req) {
      return req.prompts.map((prompt, row) => {
        const text = row === 0 ? 'U\n' : row === 1 ? tokenizer.decode(prompt).slice(-60) : 'zz\n';
        const tokens = tokenizer.encode(text);
        return { tokens, logprobs: tokens.map(() => -1), finishReason: row === 1 ? 'length' : 'stop' };
      });
    },
  };
  const trajectories = await rollout(
    {
      env: resolveEnvConfig('sokoban'),
      template: 'compact',
      chat: COMPACT_CHAT,
      seeds: [5],
      groupSize: 3,
      temperature: 1,
      maxResponseTokens: 64,
      maxContext: 4096,
      samplingSeed: 0,
    },
    backend,
    tokenizer,
  );
  const perRow = trajectories.map((t) => t.turns.length);
  assert.ok(perRow[0] > 1 && new Set(perRow).size === 1, `every row plays the same turns: ${perRow}`);
  const endings = (reason: string) => new Array<string>(perRow[0]).fill(reason);
  assert.deepEqual(
    trajectories.map((t) => t.turns.map((u) => u.finishReason)),
    [endings('stop'), endings('length'), endings('stop')],
  );
  const third = 1 / 3;
  assert.deepEqual(formatRates(trajectories, tokenizer), {
    turns: 3 * perRow[0],
    parsed: third,
    cut: third,
    echo: third,
  });
  // Trajectories rebuilt from events carry no ending: cut is over the turns whose ending is known.
  const unknown = trajectories.map((t) => ({ ...t, turns: t.turns.map(({ finishReason: _, ...u }) => u) }));
  assert.equal(formatRates(unknown, tokenizer).cut, 0);
});
