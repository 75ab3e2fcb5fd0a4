import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CHATML } from '../../../src/agent/chat-format.ts';
import { ConfigError } from '../../../src/errors.ts';
import { checkAgentChat } from '../../../src/rl/agent-config.ts';
import { resolveConfig } from '../../../src/rl/config.ts';

const agent = ['agent=node agent.js', 'model=/models/qwen3'];

test('an agent run refuses what it cannot honour, naming the field to change', () => {
  for (const [overrides, field] of [
    [['agent=node agent.js'], 'model'],
    [[...agent, 'sftSteps=10'], 'sftSteps'],
    [[...agent, 'tools=code-fence'], 'tools'],
    [[...agent, 'toolReward=otc'], 'toolReward'],
  ] as const) {
    assert.throws(
      () => resolveConfig({ overrides }),
      (e: ConfigError) => e.field === field,
    );
  }
  assert.equal(resolveConfig({ overrides: agent }).agentMerge, 'prefix');
});

test('an agent run needs a model with its own chat template', () => {
  assert.throws(
    () => checkAgentChat({ agent: 'node agent.js', model: '/m' }, CHATML),
    (e: ConfigError) => e.field === 'model',
  );
  assert.doesNotThrow(() => checkAgentChat({ agent: '', model: '/m' }, CHATML));
});
