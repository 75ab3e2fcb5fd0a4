/**
 * Tool-use metrics of a batch of responses: calls run per response, the share of them that succeeded,
 * and tool productivity = correct answers / calls run (OTC's measure; 0 when no call ran).
 */
import { executedCalls, type ToolSample } from './types.ts';

export function toolMetrics(samples: readonly ToolSample[]): Record<string, number> {
  const calls = samples.reduce((n, s) => n + executedCalls(s).length, 0);
  const ok = samples.reduce((n, s) => n + executedCalls(s).filter((c) => c.ok).length, 0);
  const correct = samples.filter((s) => s.correct).length;
  return {
    'tool/calls': calls,
    'tool/calls_per_response': samples.length === 0 ? 0 : calls / samples.length,
    'tool/success_rate': calls === 0 ? 0 : ok / calls,
    'tool/productivity': calls === 0 ? 0 : correct / calls,
  };
}
