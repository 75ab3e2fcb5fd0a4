/**
 * Executors: what runs a parsed call for one episode. Code goes to a sandbox (shared by all episodes:
 * each call gets a fresh context there); functions go to the episode's own environment.
 */
import type { Env } from '../envs/types.ts';
import type { CodeRunner } from './sandbox/pool.ts';
import { type ToolCall, type ToolExecutor } from './types.ts';
import { isToolProvider, type ToolProvider, type ToolResult } from '../envs/tool-provider.ts';

export interface ExecutorParts {
  /** Runs code calls; absent = code calls fail with "no code interpreter". */
  code?: CodeRunner;
  /** Answers function calls; absent = function calls fail with "unknown tool". */
  functions?: ToolProvider;
}

export function toolExecutor(parts: ExecutorParts): ToolExecutor {
  return {
    async execute(call: ToolCall): Promise<ToolResult> {
      if (call.kind === 'code') return runCode(parts.code, call.code);
      if (call.kind === 'function') {
        if (!parts.functions) {
          return { ok: false, output: '', error: `unknown tool "${call.name}"`, errorKind: 'unknown-tool' };
        }
        return parts.functions.callTool(call.name, call.arguments);
      }
      return { ok: false, output: '', error: `invalid tool call: ${call.reason}`, errorKind: 'parse' };
    },
  };
}

/** The executor of one episode: the environment's functions when it has any, plus the shared sandbox. */
export function executorForEnv(env: Env, code?: CodeRunner): ToolExecutor {
  return toolExecutor({ code, functions: isToolProvider(env) ? env : undefined });
}

async function runCode(runner: CodeRunner | undefined, code: string): Promise<ToolResult> {
  if (!runner) {
    return { ok: false, output: '', error: 'no code interpreter in this environment', errorKind: 'unknown-tool' };
  }
  const r = await runner.run(code);
  if (r.ok) return { ok: true, output: r.output };
  return { ok: false, output: r.output, error: r.error, errorKind: r.errorKind };
}
