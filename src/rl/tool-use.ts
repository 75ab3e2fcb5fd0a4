/**
 * Tool use in a training run (docs/spec.md §6), from its config: the sandbox a run opens for code calls, the turn
 * generator its rollouts play turns with, the tool reward that rescores finished groups, and the tool
 * metrics of a batch. Both drivers (embedded and the Temporal rollout worker) call these, so a tool run
 * trains the same way in either.
 */
import { TEMPLATES, type TemplateName } from '../agent/index.ts';
import type { TextTokenizer } from '../agent/types.ts';
import { createEnv, envDefinition, resolveEnvConfig } from '../envs/index.ts';
import { ConfigError } from '../errors.ts';
import { checkFormatForChat, toolFormat, type ToolFormatName } from '../tools/formats.ts';
import { toolTurnGenerator, type TurnGenerator } from '../tools/rollout-hook.ts';
import { SandboxPool, type CodeRunner } from '../tools/sandbox/pool.ts';
import { isToolProvider } from '../envs/tool-provider.ts';
import type { RlConfig } from './config-fields.ts';
import { runEnvConfig } from './run-env.ts';
import { applyToolRewards } from './rewards/apply.ts';
import { toolMetrics, type ToolOutcome } from './rewards/metrics.ts';
import type { ToolRewardOptions } from './rewards/types.ts';
import type { Trajectory } from './rollout.ts';

type ToolSettings = Pick<RlConfig, 'tools' | 'env' | 'template' | 'toolReward'>;

/** The run's call format, or null for a run without tools. */
export function toolFormatOf(c: Pick<RlConfig, 'tools'>): ToolFormatName | null {
  return c.tools === 'none' ? null : c.tools;
}

/** A code sandbox is opened only for runs whose agent writes code. */
export function needsSandbox(c: Pick<RlConfig, 'tools'>): boolean {
  return c.tools === 'code-fence' || c.tools === 'code-inline';
}

export function openSandbox(
  c: Pick<RlConfig, 'tools' | 'sandboxProcesses' | 'sandboxTimeoutMs'>,
): CodeRunner | undefined {
  return needsSandbox(c) ? new SandboxPool(c.sandboxProcesses, { timeoutMs: c.sandboxTimeoutMs }) : undefined;
}

/** Cross-field rules of tool runs; each error names the field to change. */
export function validateToolConfig(c: ToolSettings): void {
  const format = toolFormatOf(c);
  if (format)
    checkFormatForChat(toolFormat(format), TEMPLATES[c.template as TemplateName].chat.stop, {
      field: 'tools',
      chat: c.template,
    });
  if (format === 'function-call' && !isToolProvider(createEnv(c.env))) {
    throw new ConfigError(
      'tools',
      `environment "${c.env}" has no functions to call; function-call needs one (e.g. library)`,
    );
  }
  if (
    (c.toolReward === 'toolrl' || c.toolReward === 'tool-n1') &&
    !envDefinition(resolveEnvConfig(c.env)).expectedCalls
  ) {
    throw new ConfigError(
      'toolReward',
      `"${c.toolReward}" scores calls against ground truth, which environment "${c.env}" does not have`,
    );
  }
}

/** The rollout's turn generator for a tool run; undefined for a run without tools. */
export function toolTurns(c: RlConfig, tokenizer: TextTokenizer, code?: CodeRunner): TurnGenerator | undefined {
  const format = toolFormatOf(c);
  if (!format) return undefined;
  if (needsSandbox(c) && !code) throw new ConfigError('tools', `"${format}" needs a code sandbox (openSandbox)`);
  return toolTurnGenerator({
    format,
    maxCalls: c.toolMaxCalls,
    limitNotice: c.toolLimitNotice,
    tokenizer,
    maxContext: c.modelContext,
    code,
  });
}

export function toolRewardOptions(c: RlConfig): ToolRewardOptions {
  return {
    codeFailPenalty: c.toolCodeFailPenalty,
    c: c.otcC,
    ...(c.toolFormatCheck === 'auto' ? {} : { format: c.toolFormatCheck }),
  };
}

/** Stage: the tool reward of each group replaces the environment's rewards (identity when toolReward = env). */
export function rescoreWithToolReward(c: RlConfig, trajectories: Trajectory[], tokenizer: TextTokenizer): Trajectory[] {
  if (c.toolReward === 'env') return trajectories;
  const env = runEnvConfig(c);
  const expected = envDefinition(env).expectedCalls;
  return applyToolRewards({
    trajectories,
    reward: c.toolReward,
    options: toolRewardOptions(c),
    decode: (ids) => tokenizer.decode(ids),
    turnStop: TEMPLATES[c.template as TemplateName].chat.stop,
    ...(expected ? { expectedCalls: (t: Trajectory) => expected(env, t.seed) } : {}),
  }).trajectories;
}

/** Tool metrics of a batch (calls run per response, success rate, productivity); {} for a run without tools. */
export function toolMetricsOf(c: Pick<RlConfig, 'tools'>, outcomes: readonly ToolOutcome[]): Record<string, number> {
  return toolFormatOf(c) ? toolMetrics(outcomes) : {};
}

/** A trajectory as the tool metrics see it: its calls (all turns) and whether it ended right. */
export function toolOutcomeOf(t: {
  turns: readonly { toolCalls?: ToolOutcome['calls'] }[];
  success: boolean;
}): ToolOutcome {
  return { calls: t.turns.flatMap((turn) => turn.toolCalls ?? []), correct: t.success };
}
