import { StarpoError } from '../../errors.ts';
import { checkBudget, checkInteger, episodeOver } from '../common.ts';
import { Prng } from '../prng.ts';
import type { Env, EnvConfigBase, EnvDefinition, EnvSnapshot, StepResult, TaskDescription } from '../types.ts';
import { EXPRESSION_CHARS, MAX_EXPRESSION_LENGTH, evaluateExpression, sameMultiset } from './expression.ts';
import { generateCountdown, type CountdownInstance } from './generate.ts';
import { solveCountdown } from './solver.ts';

/** Countdown: one turn, one action (an arithmetic expression using each number exactly once). */
export interface CountdownConfig extends EnvConfigBase {
  type: 'countdown';
  minNumbers: number;
  maxNumbers: number;
  maxNumber: number;
  minTarget: number;
  maxTarget: number;
}

// RAGEN's scores (docs/spec.md §2): 1 for the right value with the right numbers; 0.1 for the right numbers whatever
// the value, the numbers read as every digit run of the answer, parsed or not (TinyZero instead pays 0.1 for
// any extracted wrong answer).
const CORRECT = 1;
const RIGHT_NUMBERS = 0.1;

const INSTRUCTION =
  'Using the given numbers, write an arithmetic expression that equals the target. Use each number exactly once; ' +
  'you may use +, -, *, / and parentheses.';

export class CountdownEnv implements Env {
  readonly type = 'countdown';
  private instance: CountdownInstance | null = null;
  private answer: string | null = null;
  private correct = false;

  constructor(private readonly config: CountdownConfig) {}

  get done(): boolean {
    return this.answer !== null;
  }

  get success(): boolean {
    return this.correct;
  }

  describe(): TaskDescription {
    const actionHint = 'an expression such as (1+2)*3';
    return { env: this.type, instruction: INSTRUCTION, legend: [], actions: [], actionHint, example: '(1+2)*3' };
  }

  reset(seed: number): string {
    return this.load(generateCountdown(new Prng(seed), this.config));
  }

  load(instance: CountdownInstance): string {
    this.instance = instance;
    this.answer = null;
    this.correct = false;
    return this.render();
  }

  /** Any short text made only of digits, operators, parentheses and spaces is an action. */
  matchAction(text: string): string | null {
    const t = text.trim();
    return t.length > 0 && t.length <= MAX_EXPRESSION_LENGTH && EXPRESSION_CHARS.test(t) && /\d/.test(t) ? t : null;
  }

  step(action: string): StepResult {
    const inst = this.current();
    if (this.answer !== null) throw episodeOver(this.type);
    this.answer = action;
    const { value } = evaluateExpression(action);
    const rightNumbers = sameMultiset((action.match(/\d+/g) ?? []).map(Number), inst.numbers);
    this.correct = rightNumbers && value !== null && value.den === 1n && value.num === BigInt(inst.target);
    const reward = this.correct ? CORRECT : rightNumbers ? RIGHT_NUMBERS : 0;
    return {
      observation: this.render(),
      reward,
      done: true,
      success: this.correct,
      info: { valid: value !== null, effective: true, rightNumbers },
    };
  }

  render(): string {
    const inst = this.current();
    return `Target: ${inst.target}\nNumbers: ${inst.numbers.join(', ')}`;
  }

  anchor(): string {
    return this.render();
  }

  snapshot(): EnvSnapshot {
    const inst = this.current();
    return { kind: 'countdown', env: this.type, target: inst.target, numbers: inst.numbers, answer: this.answer };
  }

  private current(): CountdownInstance {
    if (!this.instance) throw new StarpoError('countdown: reset(seed) before use');
    return this.instance;
  }
}

/** Registry entry. Defaults: 3–4 numbers in [1, 99], target in [1, 100] (TinyZero-like instances). */
export const COUNTDOWN: EnvDefinition<CountdownConfig> = {
  defaults: {
    type: 'countdown',
    minNumbers: 3,
    maxNumbers: 4,
    maxNumber: 99,
    minTarget: 1,
    maxTarget: 100,
    maxTurns: 1,
    maxActionsPerTurn: 1,
    maxActionsPerTrajectory: 1,
  },
  validate(c) {
    checkBudget(c);
    checkInteger('env.minNumbers', c.minNumbers, 2, 5);
    // The exhaustive solver (oracle, expert) stays fast up to 5 numbers.
    checkInteger('env.maxNumbers', c.maxNumbers, c.minNumbers, 5);
    checkInteger('env.maxNumber', c.maxNumber, 1, 10000);
    checkInteger('env.minTarget', c.minTarget, -1e6, 1e6);
    checkInteger('env.maxTarget', c.maxTarget, c.minTarget, 1e6);
  },
  create: (c) => new CountdownEnv(c),
  /** Instances are solvable by construction; the oracle confirms it with the solver. */
  oracle(c, seed) {
    const inst = generateCountdown(new Prng(seed), c);
    const solution = solveCountdown(inst.numbers, inst.target);
    return { success: solution ? 1 : 0, detail: { solution } };
  },
  expert(_c, snapshot) {
    const solution = solveCountdown(snapshot.numbers as number[], snapshot.target as number);
    return solution ? [solution] : [];
  },
  /** A format-only answer: the numbers in random order joined by random operators (right numbers, any value). */
  randomAction(_c, snapshot, rng) {
    const numbers = rng.shuffled(snapshot.numbers as number[]);
    return numbers.map((n, i) => (i === 0 ? String(n) : `${rng.pick(['+', '-', '*', '/'])}${n}`)).join('');
  },
};
