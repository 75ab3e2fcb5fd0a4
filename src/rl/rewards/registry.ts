/**
 * The tool-RL reward family, by name. Every entry scores a group of samples (one seed's rollouts);
 * all but OTC score each sample alone. Pick one with `TOOL_REWARDS[name](group, options)`.
 */
import { artistReward } from './artist.ts';
import { otcRewards } from './otc.ts';
import { toolN1Reward } from './tooln1.ts';
import { toolrlReward } from './toolrl.ts';
import { torlReward } from './torl.ts';
import type { GroupReward, ToolRewardOptions, ToolSample } from './types.ts';

const perSample =
  (fn: (s: ToolSample, o: ToolRewardOptions) => number): GroupReward =>
  (group, options = {}) =>
    group.map((s) => fn(s, options));

export const TOOL_REWARDS = {
  torl: perSample(torlReward),
  toolrl: perSample(toolrlReward),
  'tool-n1': perSample(toolN1Reward),
  artist: perSample(artistReward),
  otc: otcRewards,
} satisfies Record<string, GroupReward>;

export type ToolRewardName = keyof typeof TOOL_REWARDS;
export const TOOL_REWARD_NAMES = Object.keys(TOOL_REWARDS) as ToolRewardName[];
