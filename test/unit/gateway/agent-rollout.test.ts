/**
 * External agent processes (test/fixtures/agents/scripted-agent.ts, the openai SDK) against the gateway, with a
 * scripted policy: crashed, hung and failing agents, counted.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { agentRollout, type AgentRolloutSpec } from '../../../src/gateway/agent-rollout.ts';
import { AgentError } from '../../../src/errors.ts';
import { qwen3Chat, scripted, tokenizer } from './fixtures.ts';

const AGENT = fileURLToPath(new URL('../../fixtures/agents/scripted-agent.ts', import.meta.url));

function spec(env: string, o: Partial<AgentRolloutSpec> = {}): AgentRolloutSpec {
  return {
    command: `${env} ${process.execPath} --import tsx ${AGENT}`,
    seeds: [11, 12],
    groupIds: [0, 1],
    groupSize: 2,
    temperature: 1,
    maxResponseTokens: 16,
    maxContext: 1024,
    samplingSeed: 5,
    split: 'train',
    iteration: 1,
    concurrency: 4,
    retries: 1,
    timeoutMs: 60_000,
    merge: 'prefix',
    ...o,
  };
}

const text = { tokenizer, chat: qwen3Chat() };
const extra = (t: { extras?: Record<string, string> }, k: string) => Number(t.extras![k]);

test("agents killed mid-episode are rerun: each episode once, the killed attempts' calls discarded, same seeds", async () => {
  const backend = scripted(['Hi.<|im_end|>', 'More.<|im_end|>']);
  const ts = await agentRollout(spec('AGENT_KILL=odd'), backend, text);
  assert.deepEqual(
    ts.map((t) => [t.group, t.index, t.seed, t.turns.length]),
    [
      [0, 0, 11, 2],
      [0, 1, 11, 2],
      [1, 0, 12, 2],
      [1, 1, 12, 2],
    ],
  );
  assert.deepEqual(
    ts.map((t) => [extra(t, 'attempts'), extra(t, 'discardedCalls')]),
    [
      [1, 0],
      [2, 1],
      [1, 0],
      [2, 1],
    ],
  );
  assert.equal(backend.prompts.length, 4 * 2 + 2, 'two killed attempts made one call each');
  assert.equal(new Set(backend.seeds).size, 8, "a rerun samples its first call with the killed attempt's seed");
  assert.ok(ts.every((t) => t.return === t.turns[1].envReward && t.turns[0].envReward === 0));
});

test('an agent past its timeout is killed and rerun', async () => {
  const hung = spec('AGENT_HANG=1', { seeds: [3], groupIds: [0], groupSize: 1, timeoutMs: 8_000 });
  const ts = await agentRollout(hung, scripted(['ok<|im_end|>']), text);
  assert.deepEqual(
    ts.map((t) => [extra(t, 'attempts'), t.turns.length]),
    [[2, 2]],
  );
});

test('an agent that keeps failing fails the rollout with what it printed', async () => {
  const failing = spec('AGENT_FAIL=1', { seeds: [3], groupIds: [0], groupSize: 1 });
  await assert.rejects(
    agentRollout(failing, scripted(['x']), text),
    (e: AgentError) =>
      e instanceof AgentError &&
      /failed 2 time\(s\), last: exit code 1/.test(e.message) &&
      /failing on purpose/.test(e.message),
  );
});
