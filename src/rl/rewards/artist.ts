/**
 * ARTIST: answer + format + tool success, weighted (defaults 2, 1, 1: ARTIST's answer reward of 2
 * dominates). Tool success = successful calls / calls run; 0 when none ran.
 */
import { FORMAT_CHECKS, formatScore } from './format.ts';
import { executedCalls, type ToolRewardOptions, type ToolSample } from './types.ts';

export function toolSuccessRatio(sample: ToolSample): number {
  const ran = executedCalls(sample);
  return ran.length === 0 ? 0 : ran.filter((c) => c.ok).length / ran.length;
}

export function artistReward(sample: ToolSample, options: ToolRewardOptions = {}): number {
  const w = { answer: 2, format: 1, tool: 1, ...options.weights };
  const format = formatScore(sample, FORMAT_CHECKS[options.format ?? 'think-answer']);
  return w.answer * (sample.correct ? 1 : 0) + w.format * format + w.tool * toolSuccessRatio(sample);
}
