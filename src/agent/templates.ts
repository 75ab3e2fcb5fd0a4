import type { Budget, TaskDescription } from '../envs/types.ts';
import { COMPACT_CHAT, CHATML, type ChatFormat } from './chat-format.ts';
import type { AnswerStyle } from './parse.ts';

/**
 * Prompt templates: the text of every message of an episode, from plain data (the task description,
 * the state text, numbers). They know nothing about environments' internals or about tokens.
 */
export interface TurnView {
  /** 1-based turn number. */
  turn: number;
  /** The environment's rendering of the state. */
  state: string;
  /** Actions still allowed in the episode. */
  actionsLeft: number;
}

export interface PromptTemplate {
  readonly name: TemplateName;
  /** How the parser finds the answer in a response. */
  readonly style: AnswerStyle;
  /** Separator between actions in an answer. */
  readonly separator: string;
  /** The chat wrapping the template is written for (the policy may use another). */
  readonly chat: ChatFormat;
  /** '' = no system message. */
  system(): string;
  /** Instruction, legend, actions, "up to K actions", then the first turn. */
  firstUser(task: TaskDescription, budget: Budget, view: TurnView): string;
  /** Reports the previous turn's reward, then the next turn. */
  nextUser(reward: number, view: TurnView): string;
  /** Reports the last turn's reward. */
  finalUser(reward: number): string;
  /** How each action of `task.actions` is written in this template (same order). */
  actionNames(task: TaskDescription): string[];
  /** A well-formed response carrying these (template-form) action names; used for expert data. */
  formatResponse(names: readonly string[]): string;
}

export type TemplateName = 'full' | 'full-no-think' | 'one-shot' | 'one-shot-no-think' | 'compact';
export const TEMPLATE_NAMES: readonly TemplateName[] = [
  'full',
  'full-no-think',
  'one-shot',
  'one-shot-no-think',
  'compact',
];

/** Rewards as short decimals: 0.1 + 0.2 must not print as 0.30000000000000004. */
export function formatReward(reward: number): string {
  const rounded = Math.round(reward * 1000) / 1000;
  return String(rounded === 0 ? 0 : rounded);
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** What a one-shot example answers: the task's first action (shuffled per seed where it matters), or its example. */
function exampleAction(task: TaskDescription): string {
  return task.actions[0] ?? task.example ?? task.actionHint;
}

/**
 * RAGEN's natural-language prompt (`full`, the reference), with or without the think block. `oneShot` adds one
 * example of a well-formed response after the rules: a small chat model (SmolLM2-135M) that echoes the state
 * under `full` has a complete answer to copy (the example's action is the first listed, so copying it is no hint).
 */
function fullTemplate(think: boolean, oneShot = false): PromptTemplate {
  const format = think
    ? 'Always output: <think> [your thoughts] </think> <answer> [your answer] </answer> with no extra text.'
    : 'Always output: <answer> [your answer] </answer> with no extra text.';
  const turnBlock = (v: TurnView): string =>
    `Turn ${v.turn}:\nState:\n${v.state}\nYou have ${plural(v.actionsLeft, 'action')} left. ${format}`;
  const response = (names: readonly string[]): string => {
    const answer = `<answer>${names.join(' || ')}</answer>`;
    return think ? `<think>I will take: ${names.join(', ')}.</think>${answer}` : answer;
  };
  const name = `${oneShot ? 'one-shot' : 'full'}${think ? '' : '-no-think'}` as TemplateName;
  return {
    name,
    style: think ? 'think' : 'answer',
    separator: '||',
    chat: CHATML,
    system: () =>
      think
        ? "You're a helpful assistant. You first think inside <think> </think>, then answer inside <answer> </answer>."
        : "You're a helpful assistant. You answer inside <answer> </answer>.",
    firstUser(task, budget, view) {
      const lines = [task.instruction];
      if (task.legend.length)
        lines.push(`Symbols: ${task.legend.map(([s, meaning]) => `${s} ${meaning}`).join(', ')}.`);
      lines.push(task.actions.length ? `Actions: ${task.actions.join(', ')}.` : `Action: ${task.actionHint}.`);
      const k = budget.maxActionsPerTurn;
      lines.push(`You can take up to ${plural(k, 'action')} per turn, separated by " || ".`);
      if (oneShot) lines.push(`Example of a valid response: ${response([exampleAction(task)])}`);
      return `${lines.join('\n')}\n${turnBlock(view)}`;
    },
    nextUser: (reward, view) => `Reward: ${formatReward(reward)}\n${turnBlock(view)}`,
    finalUser: (reward) => `Reward: ${formatReward(reward)}`,
    actionNames: (task) => [...task.actions],
    formatResponse: response,
  };
}

/** One-letter names where the first letters are unique (U D L R), the full names otherwise. */
function compactNames(actions: readonly string[]): string[] {
  const letters = actions.map((a) => a.charAt(0).toUpperCase());
  return new Set(letters).size === letters.length ? letters : [...actions];
}

/**
 * The compact template for tiny models trained from scratch: the same per-episode information
 * (action names, K, state, actions left, rewards) without the natural-language instruction, which
 * such a model cannot read. First message "U D L R/5\n<state>\n10"; later ones "r-0.1\n<state>\n8";
 * the answer is "R|R|U" ended by a newline. Free-form answers (Countdown) show "=" for the names.
 */
const COMPACT: PromptTemplate = {
  name: 'compact',
  style: 'line',
  separator: '|',
  chat: COMPACT_CHAT,
  system: () => '',
  firstUser: (task, budget, view) =>
    `${compactNames(task.actions).join(' ') || '='}/${budget.maxActionsPerTurn}\n${view.state}\n${view.actionsLeft}`,
  nextUser: (reward, view) => `r${formatReward(reward)}\n${view.state}\n${view.actionsLeft}`,
  finalUser: (reward) => `r${formatReward(reward)}`,
  actionNames: (task) => compactNames(task.actions),
  formatResponse: (names) => names.join('|'),
};

export const TEMPLATES: Record<TemplateName, PromptTemplate> = {
  full: fullTemplate(true),
  'full-no-think': fullTemplate(false),
  'one-shot': fullTemplate(true, true),
  'one-shot-no-think': fullTemplate(false, true),
  compact: COMPACT,
};
