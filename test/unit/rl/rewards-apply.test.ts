import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyToolRewards, turnModelText } from '../../../src/rl/rewards/apply.ts';
import type { RolloutTurn, Trajectory } from '../../../src/rl/rollout.ts';
import type { ToolCallRecord } from '../../../src/tools/types.ts';

/** Ids are char codes; mask '1'/'0' per char; one turn ending at the last '1'. */
function trajectory(group: number, text: string, mask: string, success: boolean, calls: ToolCallRecord[]): Trajectory {
  const turn: RolloutTurn = {
    observation: '',
    response: '',
    parsedActions: [],
    executedActions: [],
    actionsProposed: 1,
    actionsEffective: 1,
    envReward: success ? 1 : 0,
    formatPenalty: -0.1,
    rewardPosition: mask.lastIndexOf('1'),
    promptTokens: 0,
    responseTokens: 0,
    toolCalls: calls,
  };
  return {
    group,
    index: 0,
    env: 'toolmath',
    seed: 1,
    ids: Array.from(text, (c) => c.charCodeAt(0)),
    mask: Array.from(mask, Number),
    roles: Array.from(mask, (m) => (m === '1' ? 4 : 0)),
    logprobs: [],
    turns: [turn],
    promptTokens: 0,
    return: turn.envReward - 0.1,
    success,
    truncated: false,
  };
}
const decode = (ids: readonly number[]) => String.fromCharCode(...ids);
const call = (ok: boolean): ToolCallRecord => ({
  kind: 'code',
  name: 'js',
  arguments: { code: 'x' },
  executed: true,
  ok,
  shown: '',
});

test('the model text of a turn skips prompt and tool-result tokens and drops the turn stop', () => {
  const t = trajectory(0, 'Q>ab[out]c$', '00110000011', true, []);
  assert.equal(turnModelText(t, 0, decode, '$'), 'abc');
});

test('OTC replaces the returns group by group; the last turn carries the whole return', () => {
  const t = [
    trajectory(0, 'Q>a$', '0011', true, [call(true)]),
    trajectory(0, 'Q>b$', '0011', true, [call(true), call(true)]),
    trajectory(1, 'Q>c$', '0011', true, [call(true), call(false)]),
    trajectory(1, 'Q>d$', '0011', false, []),
  ];
  const { trajectories, metrics } = applyToolRewards({ trajectories: t, reward: 'otc', decode, turnStop: '$' });
  const r = trajectories.map((x) => Math.round(x.return * 1e9) / 1e9);
  assert.deepEqual(r, [1, Math.round(Math.sin((2 * Math.PI) / 3) * 1e9) / 1e9, 1, 0]);
  const placed = trajectories.map((x) => [Math.round(x.turns[0].envReward * 1e9) / 1e9, x.turns[0].formatPenalty]);
  assert.deepEqual(
    placed,
    r.map((x) => [x, 0]),
  );
  assert.deepEqual(metrics['tool/calls'], 5);
  assert.equal(metrics['tool/productivity'], 3 / 5);
  assert.equal(t[0].return, 0.9, 'the input is not mutated');
});

test('ToRL with the code penalty reads failed calls from the turn records', () => {
  const t = [trajectory(0, 'Q>a$', '0011', true, [call(false)]), trajectory(0, 'Q>b$', '0011', false, [])];
  const options = { codeFailPenalty: 0.5 };
  const { trajectories } = applyToolRewards({ trajectories: t, reward: 'torl', options, decode, turnStop: '$' });
  assert.deepEqual(
    trajectories.map((x) => x.return),
    [0.5, -1],
  );
});
