/**
 * Tool-integrated rollouts: the turn generator the rollout manager (src/rl/rollout.ts) calls instead
 * of its single per-turn `policy.generate` when `spec.turnGenerator` is set. Each episode's executor is
 * built from its environment (functions of a ToolProvider such as the library) plus the shared code
 * sandbox; the turn is played by generateWithTools; the rollout then masks the tool-result tokens out
 * of the loss, lets the episode parse `answerText`, and keeps the calls on the turn record.
 *   const sandbox = new SandboxPool(2);
 *   const turnGenerator = toolTurnGenerator({
 *     format: 'code-fence', maxCalls: 4, tokenizer, maxContext: spec.maxContext, code: sandbox });
 *   const trajectories = await rollout({ ...spec, turnGenerator }, policy, tokenizer);
 */
import type { TextTokenizer } from '../agent/types.ts';
import type { Env } from '../envs/types.ts';
import type { GenerationBackend, RolloutRequest } from '../policy/engine/handle.ts';
import { executorForEnv } from './executors.ts';
import { checkFormatForChat, toolFormat, type ToolFormatName } from './formats.ts';
import { generateWithTools } from './protocol.ts';
import type { CodeRunner } from './sandbox/pool.ts';
import type { ToolCallRecord } from './types.ts';

/** The request of one turn, as the rollout builds it. */

/** One row of a turn: a plain generation, plus what a tool turn adds. */
export interface TurnGeneration {
  tokens: number[];
  logprobs: number[];
  /** Entropy of each model-written token's sampling distribution (0 on tool results), when the backend reports it. */
  entropies?: number[];
  finishReason: 'stop' | 'length';
  /** Loss mask of `tokens` when not all of them are model-written (0 on tool results). */
  mask?: number[];
  /** The text the episode parses, when not the decoded tokens (tool calls and results removed). */
  answerText?: string;
  toolCalls?: ToolCallRecord[];
}

export type TurnGenerator = (
  policy: GenerationBackend,
  request: RolloutRequest,
  envs: readonly Env[],
) => Promise<TurnGeneration[]>;

export interface ToolTurnSettings {
  format: ToolFormatName;
  /** C: tool calls run per response. */
  maxCalls: number;
  limitNotice?: boolean;
  keepChars?: number;
  tokenizer: TextTokenizer;
  /** The model's context (the rollout's maxContext): no round may grow past it. */
  maxContext?: number;
  /** The code interpreter shared by all episodes (fresh context per call); absent = no code tool. */
  code?: CodeRunner;
}

export function toolTurnGenerator(settings: ToolTurnSettings): TurnGenerator {
  const format = toolFormat(settings.format);
  return async (policy, request, envs) => {
    for (const stop of request.stopStrings) checkFormatForChat(format, stop);
    const executors = envs.map((env) => executorForEnv(env, settings.code));
    const generate = (r: RolloutRequest) => policy.generate(r);
    const rows = await generateWithTools(generate, request, executors, settings.tokenizer, {
      format,
      maxCalls: settings.maxCalls,
      limitNotice: settings.limitNotice,
      keepChars: settings.keepChars,
      maxContext: settings.maxContext,
    });
    return rows.map((r) => ({
      tokens: r.tokens,
      logprobs: r.logprobs,
      entropies: r.entropies,
      finishReason: r.finishReason,
      mask: r.mask,
      answerText: r.answerText,
      toolCalls: r.calls,
    }));
  };
}
