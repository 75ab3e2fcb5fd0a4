/**
 * Tool-use types shared by the protocol, the executors, the tool environments and the rewards.
 * Everything is plain serialisable data, so call records can travel in trajectories and events.
 */
import type { Env, Json } from '../envs/types.ts';

/** A call the model wrote, as parsed from its text. */
export type ToolCall =
  /** Code-interpreter style: a fenced ```js block. */
  | { kind: 'code'; language: string; code: string }
  /** Function-calling style: <tool_call>{"name": …, "arguments": {…}}</tool_call>. */
  | { kind: 'function'; name: string; arguments: { [key: string]: Json } }
  /** Looked like a call but could not be parsed (bad JSON, missing name); it fails as a call. */
  | { kind: 'invalid'; raw: string; reason: string };

/** What running a tool gave back. */
export interface ToolResult {
  ok: boolean;
  /** The tool's output (stdout for code, a JSON text for functions). */
  output: string;
  /** Error text when not ok; the protocol shows only its last line. */
  error?: string;
  /** Short class of failure, e.g. "timeout", "memory", "syntax", "runtime", "arguments", "unknown-tool". */
  errorKind?: string;
}

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

/** A function tool described by a JSON schema (OpenAI / Qwen function-calling style). */
export interface ToolSchema {
  name: string;
  description: string;
  parameters: {
    type: 'object';
    properties: { [name: string]: { type: 'string' | 'integer' | 'number' | 'boolean'; description: string } };
    required: string[];
  };
}

/** An environment whose actions are complemented by callable functions (the library domain). */
export interface ToolProvider {
  /** The functions the agent may call, for the prompt. */
  toolSchemas(): ToolSchema[];
  /** Runs one function against the environment's current state. Never throws: failures are results. */
  callTool(name: string, args: { [key: string]: Json }): ToolResult;
}

export function isToolProvider(env: Env): env is Env & ToolProvider {
  const e = env as Partial<ToolProvider>;
  return typeof e.toolSchemas === 'function' && typeof e.callTool === 'function';
}

/** A call as a task's ground truth lists it (expected calls of ToolRL / Tool-N1). */
export interface ExpectedCall {
  name: string;
  arguments: { [key: string]: Json };
}
