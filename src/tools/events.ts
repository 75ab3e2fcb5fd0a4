/** Tool calls as the trajectory events record them (schemas/TrajectoryEvent.avsc: name, input, output, ok). */
import type { ToolCall as EventToolCall } from '../events/types.ts';
import { canonicalJson } from './json.ts';
import type { ToolCallRecord } from './types.ts';

/** input = the code for code calls, canonical JSON of the arguments for function calls ('' when unparsable). */
export function toolCallEvents(calls: readonly ToolCallRecord[] = []): EventToolCall[] {
  return calls.map((c) => ({
    name: c.name,
    input: c.kind === 'code' ? String(c.arguments?.code ?? '') : c.arguments ? canonicalJson(c.arguments) : '',
    output: c.shown,
    ok: c.ok,
    executed: c.executed,
  }));
}
