import type { Prng } from './prng.ts';

/**
 * The environment contract. An environment owns game state only: it knows nothing about prompts,
 * tokens or models (src/agent/ does that), and everything it hands out is plain serialisable data.
 */

/** Any JSON value: what configs, snapshots and step infos are made of. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * How much an agent may do in one episode. Enforced by the agent's episode loop, not by the
 * environment (an environment only has its own internal step cap, e.g. Sokoban's 100 steps).
 */
export interface Budget {
  /** Assistant turns per episode (paper: 5 for Sokoban/FrozenLake, 1 for Bandit/Countdown). */
  maxTurns: number;
  /** Actions the parser keeps from one answer (paper: 5; 6 was its best setting for Sokoban). */
  maxActionsPerTurn: number;
  /** Actions executed in the whole episode (paper: 10). */
  maxActionsPerTrajectory: number;
}

/** Every environment config: a plain object with a registry `type` plus the budget. */
export interface EnvConfigBase extends Budget {
  type: string;
}

/** What the agent is told about the task. Read it after reset: the Bandit names its arms in the seed's order. */
export interface TaskDescription {
  /** Registry type, e.g. "sokoban". */
  env: string;
  /** Natural-language rules of the game. */
  instruction: string;
  /** Symbols of the state rendering and what they mean, in the vocabulary actually rendered. */
  legend: ReadonlyArray<readonly [symbol: string, meaning: string]>;
  /** Action vocabulary (canonical names). Empty when actions are free-form text (Countdown). */
  actions: readonly string[];
  /** How to write one action, e.g. "Up" or "an arithmetic expression". */
  actionHint: string;
  /** Free-form actions: one well-formed action for a prompt's example answer (one-shot templates). */
  example?: string;
}

export interface StepInfo {
  /** The environment understood the action (vocabulary actions always are; Countdown: it parsed). */
  valid: boolean;
  /** The action changed the state (Sokoban/FrozenLake: the player moved). */
  effective: boolean;
  [key: string]: Json;
}

export interface StepResult {
  /** Text rendering of the state after the action. */
  observation: string;
  reward: number;
  /** The episode ended inside the environment (goal, hole, internal step cap). */
  done: boolean;
  /** Ended by reaching the goal; running out of budget or steps is never success. */
  success: boolean;
  info: StepInfo;
}

/** Structured state for HTML rendering, experts and logs. `kind` tells the renderer the shape. */
export type EnvSnapshot = { kind: string; [key: string]: Json };

export interface Env {
  readonly type: string;
  readonly done: boolean;
  readonly success: boolean;
  describe(): TaskDescription;
  /** Starts the episode of `seed` (same seed, same level and same random outcomes); returns the state text. */
  reset(seed: number): string;
  /** Executes one canonical action (as returned by `matchAction`). Throws when the episode is over. */
  step(action: string): StepResult;
  /** Canonical action for a piece of model text, or null when it is not an action of this environment. */
  matchAction(text: string): string | null;
  /** Text rendering of the current state (what the agent sees). */
  render(): string;
  snapshot(): EnvSnapshot;
  /** GiGPO anchor-state key: the raw observation string; equal keys mean equal states. */
  anchor(): string;
}

/** What the oracle says about one seed: the best success probability any policy achieves there. */
export interface OracleResult {
  success: number;
  detail: { [key: string]: Json };
}

/** Remaining budget at the start of a turn, handed to experts. */
export interface BudgetLeft {
  turnsLeft: number;
  actionsLeft: number;
  maxActionsPerTurn: number;
}

/** One registry entry. `oracle` and `expert` are optional: a new environment can start without them. */
export interface EnvDefinition<C extends EnvConfigBase> {
  /** The default config; its keys, and `optional`'s, are the only keys a config of this type may have. */
  defaults: C;
  /**
   * Settings added after ids were published: accepted, but absent from the defaults, so a config that does not
   * set one keeps the environment-spec id it had before the setting existed.
   */
  optional?: readonly string[];
  /** Throws ConfigError naming the field when a value is out of range. */
  validate(config: C): void;
  create(config: C): Env;
  oracle?(config: C, seed: number): OracleResult;
  /** The actions of the next turn for the state in `snapshot` (solver-optimal where one exists). */
  expert?(config: C, snapshot: EnvSnapshot, left: BudgetLeft): string[];
  /**
   * Free-form action spaces (no vocabulary, e.g. Countdown): one random legal action for the state, what a
   * format-only warm start (sftPolicy random) demonstrates. Vocabulary environments draw from the vocabulary.
   */
  randomAction?(config: C, snapshot: EnvSnapshot, rng: Prng): string;
  /** Tool environments: the calls an expert makes in this turn before it answers (tool demonstrations). */
  expertCalls?(config: C, snapshot: EnvSnapshot): ExpertCall[];
  /**
   * Function-calling environments: the ground-truth calls of the whole episode of `seed`, in order (ToolRL, Tool-N1).
   */
  expectedCalls?(config: C, seed: number): { name: string; arguments: { [key: string]: Json } }[];
}

/** A call an expert writes: code for the code interpreter, or a named function with arguments. */
export type ExpertCall =
  | { kind: 'code'; language: string; code: string }
  | { kind: 'function'; name: string; arguments: { [key: string]: Json } };
