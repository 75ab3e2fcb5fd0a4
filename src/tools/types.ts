/**
 * Tool-use types shared by the protocol, the executors, the tool environments and the rewards.
 * Everything is plain serialisable data, so call records can travel in trajectories and events.
 */
import type { Json } from '../envs/types.ts';
import type { ToolResult } from '../envs/tool-provider.ts';

/** A call the model wrote, as parsed from its text. */
export type ToolCall =
  /** Code-interpreter style: a fenced ```js block. */
  | { kind: 'code'; language: string; code: string }
  /** Function-calling style: <tool_call>{"name": …, "arguments": {…}}</tool_call>. */
  | { kind: 'function'; name: string; arguments: { [key: string]: Json } }
  /** Looked like a call but could not be parsed (bad JSON, missing name); it fails as a call. */
  | { kind: 'invalid'; raw: string; reason: string };

/** Runs calls for one episode: a sandbox for code, an environment's functions, or both. */
export interface ToolExecutor {
  execute(call: ToolCall): Promise<ToolResult>;
}

/** One call of a response, as recorded for rewards and metrics. */
export interface ToolCallRecord {
  kind: ToolCall['kind'];
  /** Function name; "js" for code; "" when unparsable. */
  name: string;
  /** Function arguments; {code} for code; null when unparsable. */
  arguments: { [key: string]: Json } | null;
  /** False past the per-response call limit: the call was written but not run. */
  executed: boolean;
  /** Ran and succeeded (false for unparsable, failed and unexecuted calls). */
  ok: boolean;
  /** The text shown to the model inside the result block ('' when not executed). */
  shown: string;
  errorKind?: string;
}
