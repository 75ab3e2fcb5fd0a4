/**
 * Inputs of the tool-RL rewards: one sample = one response (or one trajectory) of a group, with the
 * calls it made, whether its final answer was right, and — for function-calling tasks — the
 * ground-truth calls. Plain data; ToolCallRecord (src/tools) fits RewardCall as is.
 */
import type { Json } from '../../envs/types.ts';
import type { ExpectedCall } from '../../envs/tool-provider.ts';

export interface RewardCall {
  kind: 'code' | 'function' | 'invalid';
  /** Function name ("js" for code, "" when unparsable). */
  name: string;
  arguments: { [key: string]: Json } | null;
  /** False for calls written past the per-response limit (not run; not counted as calls). */
  executed: boolean;
  ok: boolean;
}

export type { ExpectedCall } from '../../envs/tool-provider.ts';

export interface ToolSample {
  /** What the model wrote (calls kept, tool results removed): ToolGeneration.modelText. */
  response: string;
  /**
   * A multi-turn trajectory's responses, turn by turn (`response` joins them). The published rewards
   * score one response; here format terms score each turn and take the mean (ToolRL, ARTIST), and
   * Tool-N1's reasoning requirement holds for every turn.
   */
  turns?: readonly string[];
  calls: readonly RewardCall[];
  /** The environment judged the final answer right. */
  correct: boolean;
  /** Ground-truth calls (ToolRL, Tool-N1). */
  expectedCalls?: readonly ExpectedCall[];
}

/** A reward over one group (OTC needs the group; the others score each sample alone). */
export type GroupReward = (group: readonly ToolSample[], options?: ToolRewardOptions) => number[];

export interface ToolRewardOptions {
  /** ToRL: subtracted when a code block failed to run (ToRL's 0.5; default 0 = off). */
  codeFailPenalty?: number;
  /** ToolRL / ARTIST: which structure the format reward checks (defaults: 'toolrl' / 'think-answer'). */
  format?: FormatCheckName;
  /** ARTIST: weights of answer, format and tool-success terms (default 2, 1, 1). */
  weights?: { answer?: number; format?: number; tool?: number };
  /** OTC: smoothing constant c of cos(m·π/(2m+c)) when the group's best correct answer used no call (default 1). */
  c?: number;
}

export type FormatCheckName = 'toolrl' | 'think-answer' | 'boxed' | 'none';

/** Calls that ran: the m of OTC, the denominator of success rates. */
export function executedCalls(sample: ToolSample): RewardCall[] {
  return sample.calls.filter((c) => c.executed);
}
