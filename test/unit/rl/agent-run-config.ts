/** Agent runs the tests train: the example Countdown agent or the scripted test agent, on a model directory. */
import { fileURLToPath } from 'node:url';
import { resolveConfig } from '../../../src/rl/config.ts';

const tsx = (file: string) => `${process.execPath} --import tsx ${fileURLToPath(new URL(file, import.meta.url))}`;
export const EXAMPLE_AGENT = tsx('../../../examples/countdown-agent/agent.ts');
export const SCRIPTED_AGENT = tsx('../../fixtures/agents/scripted-agent.ts');

/** GRPO over 2 groups × 2 episodes, 2 iterations, validation on 2 seeds at the end, one thread (bitwise). */
export function agentConfig(model: string, agent: string, extra: string[] = []) {
  const small = [
    'iterations=2',
    'envGroups=2',
    'groupSize=2',
    'miniBatchSize=4',
    'valSeeds=2',
    'valEvery=2',
    'maxResponseTokens=8',
    'modelContext=512',
    'threads=1',
    'lrActor=1e-3',
  ];
  return resolveConfig({ preset: 'grpo', overrides: [`model=${model}`, `agent=${agent}`, ...small, ...extra] });
}
