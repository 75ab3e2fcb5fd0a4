/**
 * Tool-integrated agents: the in-turn tool protocol, call formats, result display, executors, the code
 * sandbox and demonstrations. A rollout turn with tools:
 *   const sandbox = new SandboxPool(2);
 *   const executors = episodes.map((e) => executorForEnv(e.env, sandbox));
 *   const rows = await generateWithTools((r) => policy.generate(r), request, executors, tokenizer,
 *     { format: TOOL_FORMATS['code-fence'], maxCalls: 4 });
 *   // rows[i]: tokens + mask (0 on tool results) + logprobs, answerText for the parser, calls for rewards
 */
export { encodeSegments, toolDemonstration, type DemonstrationStep, type Segment } from './demonstration.ts';
export { toolCallEvents } from './events.ts';
export { executorForEnv, toolExecutor, type ExecutorParts } from './executors.ts';
export {
  TOOL_FORMATS,
  checkFormatForChat,
  parseFunctionCall,
  toolFormat,
  type FoundCall,
  type ToolFormat,
  type ToolFormatName,
} from './formats.ts';
export { canonicalJson, isJsonObject } from './json.ts';
export { ELISION, KEEP_CHARS, elide, lastLine, showResult } from './output.ts';
export {
  generateWithTools,
  record,
  roundSeed,
  type ToolGeneration,
  type ToolTurnRequest,
  type ToolTurnOptions,
} from './protocol.ts';
export { toolTurnGenerator, type ToolTurnSettings, type TurnGeneration, type TurnGenerator } from './rollout-hook.ts';
export { benchmarkSandbox, type SandboxBenchmark } from './sandbox/bench.ts';
export { SandboxPool, type CodeRunner } from './sandbox/pool.ts';
export { Sandbox, type SandboxErrorKind, type SandboxOptions, type SandboxResult } from './sandbox/sandbox.ts';
export { type ToolCall, type ToolCallRecord, type ToolExecutor } from './types.ts';
