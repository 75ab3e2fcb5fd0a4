import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sampleGroups } from '../../../src/rl/stages/rollout.ts';
import { trainSeed } from '../../../src/rl/seeds.ts';
import { resolveConfig } from '../../../src/rl/config.ts';
import type { GenerationBackend } from '../../../src/policy/engine/handle.ts';
import { COMPACT_CHAT } from '../../../src/agent/chat-format.ts';
import { scratchTokenizer } from '../../../src/rl/vocabulary.ts';
import { envEpisodes } from '../../../src/rl/episode-source.ts';

const tokenizer = scratchTokenizer();
const text = { tokenizer, chat: COMPACT_CHAT };

/** Answers every prompt with the same text: every group's returns are equal, so no group is informative. */
const constant: GenerationBackend = {
  async generate(req) {
    const tokens = tokenizer.encode('x\n');
    return req.prompts.map(() => ({ tokens, logprobs: tokens.map(() => -1), finishReason: 'stop' as const }));
  },
};

test('dynamic sampling plays new groups until maxTries when no group carries signal', async () => {
  const c = resolveConfig({
    preset: 'dapo',
    overrides: ['env=bandit', 'envGroups=2', 'groupSize=2', 'dynamicSamplingMaxTries=3', 'miniBatchSize=2'],
  });
  const out = await sampleGroups(c, 5, envEpisodes(c, constant, text));
  assert.deepEqual([...new Set(out.trajectories.map((t) => t.group))], [0, 1, 2, 3, 4, 5]);
  assert.deepEqual(
    [...new Set(out.trajectories.map((t) => t.seed))],
    [0, 1, 2, 3, 4, 5].map((g) => trainSeed(c, 5, g)),
  );
  assert.deepEqual(out.informative, []);
  assert.equal(out.metrics['dynamic_sampling/gave_up'], 1);
  assert.equal(out.metrics['dynamic_sampling/tries'], 3);
});

test('without dynamic sampling the rollout is the configured groups only', async () => {
  const c = resolveConfig({
    preset: 'grpo',
    overrides: ['env=bandit', 'envGroups=2', 'groupSize=2', 'miniBatchSize=2'],
  });
  const out = await sampleGroups(c, 5, envEpisodes(c, constant, text));
  assert.equal(out.trajectories.length, 4);
  assert.equal(out.informative, undefined);
});
