import { test } from 'node:test';
import assert from 'node:assert/strict';
import { episodeSetup, reenact } from '../../../src/replay/reenact.ts';
import { config, trajectory } from './fixtures.ts';

const setup = episodeSetup(config);

test('replaying a logged bandit answer recovers the messages and the proposed actions', () => {
  const played = reenact(trajectory({ seed: 1, group: 0, rollout: 0, response: 'P' }), setup);
  assert.deepEqual(played.messages, [
    { role: 'user', content: 'P D/1\nArms: Phoenix, Dragon\n1' },
    { role: 'assistant', content: 'P' },
    { role: 'user', content: 'r0.1' },
  ]);
  const expected = [[1], [{ actions: ['Phoenix'], reward: 0.1 }], null];
  assert.deepEqual([played.proposed, played.turns, played.divergence], expected);
});

test('an answer that is no action proposes one piece and executes none', () => {
  const played = reenact(trajectory({ seed: 1, group: 0, rollout: 0, response: 'x' }), setup);
  assert.deepEqual([played.proposed, played.turns, played.divergence], [[1], [{ actions: [], reward: -0.1 }], null]);
});

test('a log that disagrees with the environment is a divergence', () => {
  const e = trajectory({ seed: 4, group: 0, rollout: 0, response: 'D' });
  const lying = { ...e, turns: [{ ...e.turns[0], envReward: 0 }] };
  assert.equal(reenact(lying, setup).divergence, 'turn 0: env reward 1, log says 0');
  assert.equal(reenact({ ...e, success: false }, setup).divergence, 'success true, log says false');
});
