/**
 * How well a policy keeps the answer format, over turns: the share with a parsed action, the share of responses
 * cut at the token limit, and the share that echo their prompt. A small chat model fails here before RL can
 * start (an untrained SmolLM2 copies the board or the arm list instead of answering, so every reward is the
 * format penalty and every advantage 0), so `starpo eval` and `bench learning` report these beside success.
 */
import type { TextTokenizer } from '../agent/types.ts';
import type { Trajectory } from './rollout.ts';

export interface FormatRates {
  /** Turns counted (every turn of every trajectory). */
  turns: number;
  /** Share of turns whose response held at least one action the parser read. */
  parsed: number;
  /** Share of turns whose generation was cut at maxResponseTokens (of the turns whose ending is known). */
  cut: number;
  /** Share of turns whose response echoes its prompt (echoesPrompt). */
  echo: number;
}

/**
 * How long a verbatim run of prompt text makes a response an echo: longer than any answer a prompt shows
 * (`<answer>Right || Up</answer>` is 27), shorter than a board or a line of instructions.
 */
export const ECHO_CHARS = 32;

/** A response that is nothing but a piece of its prompt this long or longer is an echo ("Arms: Dragon, Phoenix"). */
export const ECHO_WHOLE_CHARS = 16;

const squeeze = (text: string): string => text.replace(/\s+/g, ' ').trim();

/**
 * Whether the response repeats `chars` or more characters of the prompt verbatim, or is as a whole a piece of the
 * prompt of ECHO_WHOLE_CHARS or more (runs of whitespace count as one space).
 */
export function echoesPrompt(response: string, prompt: string, chars = ECHO_CHARS): boolean {
  const r = squeeze(response);
  const p = squeeze(prompt);
  if (r.length >= ECHO_WHOLE_CHARS && p.includes(r)) return true;
  if (r.length < chars || p.length < chars) return false;
  const windows = new Set<string>();
  for (let i = 0; i + chars <= p.length; i++) windows.add(p.slice(i, i + chars));
  for (let i = 0; i + chars <= r.length; i++) if (windows.has(r.slice(i, i + chars))) return true;
  return false;
}

/** The text a turn was generated from, less what the model wrote earlier: template, system, user, observations. */
function promptText(t: Trajectory, promptTokens: number, tokenizer: TextTokenizer): string {
  const ids: number[] = [];
  for (let i = 0; i < promptTokens && i < t.ids.length; i++) if (t.mask[i] === 0) ids.push(t.ids[i]);
  return tokenizer.decode(ids);
}

export function formatRates(trajectories: readonly Trajectory[], tokenizer: TextTokenizer): FormatRates {
  let turns = 0;
  let parsed = 0;
  let ended = 0;
  let cut = 0;
  let echo = 0;
  for (const t of trajectories) {
    for (const turn of t.turns) {
      turns++;
      if (turn.parsedActions.length > 0) parsed++;
      if (turn.finishReason !== undefined) ended++;
      if (turn.finishReason === 'length') cut++;
      if (echoesPrompt(turn.response, promptText(t, turn.promptTokens, tokenizer))) echo++;
    }
  }
  const share = (n: number, of: number) => (of === 0 ? 0 : n / of);
  return { turns, parsed: share(parsed, turns), cut: share(cut, ended), echo: share(echo, turns) };
}
