/**
 * The reward stage of tool-RL: rescores finished trajectories with a tool reward, group by group (OTC
 * needs the group), and puts the result in place of the environment's rewards — the last turn carries
 * the whole return, the other turns and all format penalties become 0 (the tool rewards carry their
 * own format terms). Pure: returns new trajectories and the tool metrics of the batch.
 */
import type { Trajectory } from '../rollout.ts';
import { TOOL_REWARDS, type ToolRewardName } from './registry.ts';
import { toolMetrics } from './metrics.ts';
import type { ExpectedCall, ToolRewardOptions, ToolSample } from './types.ts';

export interface ApplyToolRewardsInput {
  trajectories: readonly Trajectory[];
  reward: ToolRewardName;
  options?: ToolRewardOptions;
  /** The policy tokenizer's decode: recovers what the model wrote from the trajectory's ids and mask. */
  decode: (ids: readonly number[]) => string;
  /** The chat format's turn stop, removed from each turn's text. */
  turnStop: string;
  /** Ground-truth calls of a trajectory, all turns in order (ToolRL, Tool-N1). */
  expectedCalls?: (t: Trajectory) => ExpectedCall[];
}

/** What the model wrote in turn k: the masked-in tokens after the previous turn's last token. */
export function turnModelText(
  t: Trajectory,
  k: number,
  decode: (ids: readonly number[]) => string,
  turnStop: string,
): string {
  const from = k === 0 ? 0 : (t.turns[k - 1]?.rewardPosition ?? -1) + 1;
  const to = t.turns[k]?.rewardPosition ?? -1;
  const ids: number[] = [];
  for (let i = from; i <= to; i++) if (t.mask[i] === 1) ids.push(t.ids[i] as number);
  const text = decode(ids);
  return turnStop && text.endsWith(turnStop) ? text.slice(0, -turnStop.length) : text;
}

export function toolSampleOf(t: Trajectory, input: Omit<ApplyToolRewardsInput, 'trajectories' | 'reward'>): ToolSample {
  const turns = t.turns.map((_, k) => turnModelText(t, k, input.decode, input.turnStop));
  return {
    response: turns.join('\n'),
    turns,
    calls: t.turns.flatMap((turn) => turn.toolCalls ?? []),
    correct: t.success,
    ...(input.expectedCalls ? { expectedCalls: input.expectedCalls(t) } : {}),
  };
}

export function applyToolRewards(input: ApplyToolRewardsInput): {
  trajectories: Trajectory[];
  metrics: Record<string, number>;
} {
  const samples = input.trajectories.map((t) => toolSampleOf(t, input));
  const rewards = new Array<number>(samples.length).fill(0);
  const groups = new Map<number, number[]>();
  input.trajectories.forEach((t, i) => groups.set(t.group, [...(groups.get(t.group) ?? []), i]));
  for (const rows of groups.values()) {
    const scored = TOOL_REWARDS[input.reward](
      rows.map((i) => samples[i] as ToolSample),
      input.options,
    );
    rows.forEach((row, j) => {
      rewards[row] = scored[j] as number;
    });
  }
  const trajectories = input.trajectories.map((t, i) => ({
    ...t,
    turns: t.turns.map((turn, k) => ({
      ...turn,
      envReward: k === t.turns.length - 1 ? (rewards[i] as number) : 0,
      formatPenalty: 0,
    })),
    return: rewards[i] as number,
  }));
  const mean = rewards.length === 0 ? 0 : rewards.reduce((a, b) => a + b, 0) / rewards.length;
  return { trajectories, metrics: { ...toolMetrics(samples), 'tool/reward_mean': mean } };
}
