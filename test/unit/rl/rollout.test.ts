import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rollout } from '../../../src/rl/rollout.ts';
import { type GenerationBackend } from '../../../src/policy/engine/handle.ts';
import { COMPACT_CHAT } from '../../../src/agent/chat-format.ts';
import { scratchTokenizer } from '../../../src/rl/vocabulary.ts';
import { resolveEnvConfig } from '../../../src/envs/index.ts';

const tokenizer = scratchTokenizer();

/** Answers every prompt with the next scripted text; log-prob of the i-th token is −(i+1)/10. */
function scripted(replies: string[]): GenerationBackend & { calls: number } {
  const backend = {
    calls: 0,
    async generate(req: Parameters<GenerationBackend['generate']>[0]) {
      const text = replies[Math.min(backend.calls++, replies.length - 1)];
      return req.prompts.map(() => {
        const tokens = tokenizer.encode(text);
        return { tokens, logprobs: tokens.map((_, i) => -(i + 1) / 10), finishReason: 'stop' as const };
      });
    },
  };
  return backend;
}

test('a scripted bandit rollout gives one turn per trajectory with exact mask, log-probs and reward', async () => {
  const env = resolveEnvConfig('bandit');
  const trajectories = await rollout(
    {
      env,
      template: 'compact',
      chat: COMPACT_CHAT,
      seeds: [3, 4],
      groupSize: 2,
      temperature: 1,
      maxResponseTokens: 8,
      maxContext: 512,
      samplingSeed: 0,
    },
    scripted(['nonsense\n']),
    tokenizer,
  );
  assert.equal(trajectories.length, 4);
  assert.deepEqual(
    trajectories.map((t) => [t.group, t.index, t.seed]),
    [
      [0, 0, 3],
      [0, 1, 3],
      [1, 0, 4],
      [1, 1, 4],
    ],
  );
  for (const t of trajectories) {
    const written = t.ids.filter((_, i) => t.mask[i] === 1);
    assert.equal(tokenizer.decode(written), 'nonsense\n');
    assert.deepEqual(
      t.logprobs.filter((_, i) => t.mask[i] === 1),
      [-0.1, -0.2, -0.3, -0.4, -0.5, -0.6, -0.7, -0.8, -0.9],
    );
    assert.equal(t.turns.length, 1);
    assert.equal(t.turns[0].formatPenalty, -0.1);
    assert.equal(t.return, -0.1);
    assert.equal(t.turns[0].rewardPosition, t.mask.lastIndexOf(1));
    assert.equal(t.success, false);
  }
});

test('a scripted sokoban rollout stops at the turn budget and masks only the answers', async () => {
  const env = resolveEnvConfig('sokoban');
  const backend = scripted(['U\n']);
  const [t] = await rollout(
    {
      env,
      template: 'compact',
      chat: COMPACT_CHAT,
      seeds: [11],
      groupSize: 1,
      temperature: 1,
      maxResponseTokens: 4,
      maxContext: 4096,
      samplingSeed: 0,
      budget: { maxTurns: 3 },
    },
    backend,
    tokenizer,
  );
  assert.equal(backend.calls, t.turns.length);
  assert.ok(t.turns.length <= 3);
  assert.equal(
    t.mask.reduce((a, b) => a + b, 0),
    2 * t.turns.length,
  );
  assert.deepEqual(
    t.turns.map((x) => x.rewardPosition),
    t.mask.flatMap((m, i) => (m === 1 && t.ids[i] === tokenizer.encode('\n')[0] ? [i] : [])),
  );
  assert.equal(
    t.return,
    t.turns.reduce((s, x) => s + x.envReward + x.formatPenalty, 0),
  );
});
