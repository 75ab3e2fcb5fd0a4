/** ToRL: +1 for a right answer, −1 otherwise; optionally minus a penalty when a code block failed to run. */
import { executedCalls, type ToolRewardOptions, type ToolSample } from './types.ts';

export function torlReward(sample: ToolSample, options: ToolRewardOptions = {}): number {
  const base = sample.correct ? 1 : -1;
  const failed = executedCalls(sample).some((c) => c.kind === 'code' && !c.ok);
  return failed ? base - (options.codeFailPenalty ?? 0) : base;
}
