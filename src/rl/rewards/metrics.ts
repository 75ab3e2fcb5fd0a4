/**
 * Tool-use metrics of a batch of responses: calls run per response, the share of them that succeeded,
 * and tool productivity = correct answers / calls run (OTC's measure; 0 when no call ran).
 */
import type { RewardCall } from './types.ts';
import { TOOL_CALLS_PER_RESPONSE, TOOL_PRODUCTIVITY } from '../metric-names.ts';

/** What the metrics read of a response: whether each call ran and succeeded, and whether the answer was right. */
export interface ToolOutcome {
  calls: readonly Pick<RewardCall, 'executed' | 'ok'>[];
  correct: boolean;
}

export function toolMetrics(samples: readonly ToolOutcome[]): Record<string, number> {
  const ran = samples.flatMap((s) => s.calls.filter((c) => c.executed));
  const ok = ran.filter((c) => c.ok).length;
  const correct = samples.filter((s) => s.correct).length;
  return {
    'tool/calls': ran.length,
    [TOOL_CALLS_PER_RESPONSE]: samples.length === 0 ? 0 : ran.length / samples.length,
    'tool/success_rate': ran.length === 0 ? 0 : ok / ran.length,
    [TOOL_PRODUCTIVITY]: ran.length === 0 ? 0 : correct / ran.length,
  };
}
