/**
 * The contract of an environment that offers functions to call (the library domain): the schemas it shows the
 * model, what a call returns, and the calls a task expects. The tool protocol (src/tools/) runs the calls.
 */
import type { Env, Json } from './types.ts';

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
