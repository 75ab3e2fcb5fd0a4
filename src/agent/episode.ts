import { StarpoError } from '../errors.ts';
import type { Budget, Env, TaskDescription } from '../envs/types.ts';
import { parseResponse, type ParsedResponse } from './parse.ts';
import { DEFAULT_FORMAT_PENALTY, type RewardParts, signedPenalty, trajectoryReturn, turnReward } from './reward.ts';
import type { PromptTemplate } from './templates.ts';
import type { Message } from './types.ts';

/**
 * One episode of the agent protocol, as text: it renders the messages with a template, parses each
 * response, runs the actions in the environment within the budget, and charges the format penalty.
 * It is the only module that holds both an environment and a template; tokens are the
 * ContextBuilder's business, fed with the messages this class produces. Rewards are assembled as
 * reward.ts defines them; the penalty a turn was charged is kept here as a magnitude (see there).
 * A turn's fields have the names every turn record in starpo uses (rl/rollout.ts, events/types.ts).
 */
export interface TurnRecord {
  turn: number;
  /** The state text before the turn (Env.anchor()): GiGPO's anchor-state key. */
  observation: string;
  response: string;
  parsed: ParsedResponse;
  /** Canonical actions the environment executed (valid ones, within the budget, until done). */
  executedActions: string[];
  /** Executed actions that changed the state. */
  actionsEffective: number;
  envReward: number;
  /** ≥ 0: the penalty charged for a dropped action or no action (−formatPenalty of the run), else 0. */
  penaltyCharged: number;
  /** envReward − penaltyCharged (turnReward of the signed penalty): the reward told to the agent and trained on. */
  reward: number;
  /** The user message that followed (reward report, and the next turn unless the episode ended). */
  userMessage: string;
  done: boolean;
  success: boolean;
}

export interface EpisodeOptions {
  /** ≤ 0, as the run config's formatPenalty (default DEFAULT_FORMAT_PENALTY). */
  formatPenalty?: number;
  maxParseChars?: number;
}

export class Episode {
  readonly messages: Message[] = [];
  readonly turns: TurnRecord[] = [];
  private task: TaskDescription | null = null;
  private matcher: (piece: string) => string | null = () => null;
  private actionsUsed = 0;
  private finished = false;

  constructor(
    readonly env: Env,
    readonly budget: Budget,
    readonly template: PromptTemplate,
    private readonly options: EpisodeOptions = {},
  ) {}

  get done(): boolean {
    return this.finished;
  }

  get success(): boolean {
    return this.env.success;
  }

  get totalReward(): number {
    return trajectoryReturn(this.turns.map(rewardParts));
  }

  get actionsLeft(): number {
    return this.budget.maxActionsPerTrajectory - this.actionsUsed;
  }

  get turnsLeft(): number {
    return this.budget.maxTurns - this.turns.length;
  }

  /** Resets the environment and returns the opening messages (system, if any, and the first user message). */
  start(seed: number): Message[] {
    const state = this.env.reset(seed);
    const task = this.env.describe();
    this.task = task;
    this.matcher = aliasMatcher(task, this.template.actionNames(task), (t) => this.env.matchAction(t));
    this.messages.length = this.turns.length = 0;
    this.actionsUsed = 0;
    this.finished = false;
    const system = this.template.system();
    if (system) this.messages.push({ role: 'system', content: system });
    const first = this.template.firstUser(task, this.budget, { turn: 1, state, actionsLeft: this.actionsLeft });
    this.messages.push({ role: 'user', content: first });
    return this.messages.slice();
  }

  /** Plays one assistant turn given the model's text (without the chat stop marker). */
  respond(response: string): TurnRecord {
    if (!this.task) throw new StarpoError('episode: start(seed) before respond()');
    if (this.finished) throw new StarpoError('episode: respond() after the episode ended');
    const observation = this.env.anchor();
    const parsed = parseResponse(response, {
      style: this.template.style,
      separator: this.template.separator,
      maxActions: this.budget.maxActionsPerTurn,
      match: this.matcher,
      maxChars: this.options.maxParseChars,
    });
    const executed: string[] = [];
    let envReward = 0;
    let effective = 0;
    for (const action of parsed.actions) {
      if (this.env.done || this.actionsLeft <= 0) break;
      const step = this.env.step(action);
      executed.push(action);
      this.actionsUsed++;
      envReward += step.reward;
      if (step.info.effective) effective++;
    }
    const penaltyCharged = parsed.formatError ? -(this.options.formatPenalty ?? DEFAULT_FORMAT_PENALTY) : 0;
    const reward = turnReward({ envReward, formatPenalty: signedPenalty(penaltyCharged) });
    this.finished = this.env.done || this.turns.length + 1 >= this.budget.maxTurns || this.actionsLeft <= 0;
    const userMessage = this.finished
      ? this.template.finalUser(reward)
      : this.template.nextUser(reward, {
          turn: this.turns.length + 2,
          state: this.env.render(),
          actionsLeft: this.actionsLeft,
        });
    this.messages.push({ role: 'assistant', content: response }, { role: 'user', content: userMessage });
    const record: TurnRecord = {
      turn: this.turns.length + 1,
      observation,
      response,
      parsed,
      executedActions: executed,
      actionsEffective: effective,
      envReward,
      penaltyCharged,
      reward,
      userMessage,
      done: this.finished,
      success: this.env.success,
    };
    this.turns.push(record);
    return record;
  }
}

const rewardParts = (t: TurnRecord): RewardParts => ({
  envReward: t.envReward,
  formatPenalty: signedPenalty(t.penaltyCharged),
});

/** Template names (e.g. compact "U") first, then the environment's own matching (full names, free-form). */
function aliasMatcher(
  task: TaskDescription,
  names: readonly string[],
  fallback: (piece: string) => string | null,
): (piece: string) => string | null {
  const byAlias = new Map<string, string>();
  names.forEach((name, i) => byAlias.set(name.toLowerCase(), task.actions[i] as string));
  return (piece) => byAlias.get(piece.toLowerCase()) ?? fallback(piece);
}
