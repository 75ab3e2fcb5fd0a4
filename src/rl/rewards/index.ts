/**
 * Tool-RL rewards: the registry (registry.ts), each reward's pure function, format checks, metrics,
 * and the reward stage that rescores trajectories (apply.ts).
 */
export { TOOL_REWARDS, TOOL_REWARD_NAMES, type ToolRewardName } from './registry.ts';
export { applyToolRewards, toolSampleOf, turnModelText, type ApplyToolRewardsInput } from './apply.ts';
export { artistReward, toolSuccessRatio } from './artist.ts';
export { FORMAT_CHECKS, blockSequence, hasThink } from './format.ts';
export { toolMetrics } from './metrics.ts';
export { otcRewards, otcToolFactor } from './otc.ts';
export { toolN1Reward } from './tooln1.ts';
export { jaccard, sameCallMultiset, toolrlCorrectness, toolrlReward } from './toolrl.ts';
export { torlReward } from './torl.ts';
export { executedCalls } from './types.ts';
export type { ExpectedCall, FormatCheckName, GroupReward, RewardCall, ToolRewardOptions, ToolSample } from './types.ts';
