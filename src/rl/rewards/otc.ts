/**
 * OTC (optimal tool calls): correctness (1/0) multiplied by a tool-efficiency factor. With m calls in
 * the response and n the fewest calls among the group's correct answers:
 *   n > 0: f = 2nm/(m+n), r_tool = sin(f·π/(2n))   (1 at m = n, falling towards 0 as m grows or shrinks)
 *   n = 0: r_tool = cos(m·π/(2m+c))                 (1 at m = 0)
 * A group without a correct answer scores 0 everywhere.
 */
import { executedCalls, type ToolRewardOptions, type ToolSample } from './types.ts';

export function otcToolFactor(m: number, n: number, c = 1): number {
  if (n === 0) return Math.cos((m * Math.PI) / (2 * m + c));
  const f = (2 * n * m) / (m + n);
  return Math.sin((f * Math.PI) / (2 * n));
}

export function otcRewards(group: readonly ToolSample[], options: ToolRewardOptions = {}): number[] {
  const calls = group.map((s) => executedCalls(s).length);
  const correctCalls = calls.filter((_, i) => group[i]?.correct);
  if (correctCalls.length === 0) return group.map(() => 0);
  const n = Math.min(...correctCalls);
  return group.map((s, i) => (s.correct ? otcToolFactor(calls[i] as number, n, options.c ?? 1) : 0));
}
