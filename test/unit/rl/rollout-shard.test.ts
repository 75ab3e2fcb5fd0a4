import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rollout } from '../../../src/rl/rollout.ts';
import { resolveConfig } from '../../../src/rl/config.ts';
import { createModels } from '../../../src/run/models.ts';
import { scratchModelConfig } from '../../../src/rl/run-model.ts';
import { COMPACT_CHAT } from '../../../src/agent/chat-format.ts';
import { scratchTokenizer } from '../../../src/rl/vocabulary.ts';
import { resolveEnvConfig } from '../../../src/envs/index.ts';

test('a shard of groups samples exactly the trajectories the whole rollout gives those groups', async () => {
  const tokenizer = scratchTokenizer();
  const c = resolveConfig({ overrides: ['modelLayers=1', 'modelHidden=32', 'modelFfn=64', 'threads=1'] });
  const { actor, critic } = createModels(c, scratchModelConfig(c, tokenizer), tokenizer);
  const spec = {
    env: resolveEnvConfig('sokoban'),
    template: 'compact' as const,
    chat: COMPACT_CHAT,
    groupSize: 3,
    temperature: 1,
    maxResponseTokens: 6,
    maxContext: 1024,
    samplingSeed: 42,
    budget: { maxTurns: 2 },
  };
  const whole = await rollout({ ...spec, seeds: [5, 6, 7] }, actor, tokenizer);
  const shard = await rollout({ ...spec, seeds: [7], groupIds: [2] }, actor, tokenizer);
  assert.deepEqual(
    shard,
    whole.filter((t) => t.group === 2),
  );
  assert.notDeepEqual(whole[0].ids, whole[1].ids, 'rollouts of one group must sample differently');
  await Promise.all([actor.close(), critic?.close()]);
});
