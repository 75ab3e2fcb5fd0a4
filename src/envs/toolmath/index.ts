/**
 * Tool-integrated math (ToRL / ZeroTIR style): one procedurally generated problem per seed with an exact
 * integer answer, one turn, the answer in \boxed{}. The environment only checks answers; the code
 * interpreter is the tool protocol's business (src/tools), so the same problems serve agents with and
 * without tools under the same budget.
 */
import { ConfigError, StarpoError } from '../../errors.ts';
import { checkBudget, checkInteger, episodeOver } from '../common.ts';
import { Prng } from '../prng.ts';
import type { Env, EnvConfigBase, EnvDefinition, EnvSnapshot, StepResult, TaskDescription } from '../types.ts';
import {
  TOOLMATH_GENERATORS,
  TOOLMATH_KINDS,
  boxedInteger,
  type ToolmathKind,
  type ToolmathProblem,
} from './problems.ts';

export {
  TOOLMATH_KINDS,
  boxedInteger,
  countDigitSum,
  powMod,
  type ToolmathKind,
  type ToolmathProblem,
} from './problems.ts';

export interface ToolmathConfig extends EnvConfigBase {
  type: 'toolmath';
  /** Problem kinds drawn from, uniformly by seed. */
  kinds: ToolmathKind[];
  /** 1–3: operand sizes and ranges grow with it (1 keeps sandbox calls well under 100 ms). */
  scale: number;
}

const INSTRUCTION =
  'Solve the problem exactly. You may run JavaScript: write a ```js code block that prints with console.log, ' +
  'and its output comes back in an ```output block. Use BigInt (e.g. 123n) for large integers. ' +
  'Give the final answer as \\boxed{integer}.';

/** The problem of `seed`: a pure function of config and seed (demonstrations and rewards use it too). */
export function toolmathProblem(config: Pick<ToolmathConfig, 'kinds' | 'scale'>, seed: number): ToolmathProblem {
  const prng = new Prng(seed);
  const kind = prng.pick(config.kinds);
  return TOOLMATH_GENERATORS[kind](prng, config.scale);
}

export class ToolmathEnv implements Env {
  readonly type = 'toolmath';
  private problem: ToolmathProblem | null = null;
  private given: string | null = null;

  constructor(private readonly config: ToolmathConfig) {}

  get done(): boolean {
    return this.given !== null;
  }

  get success(): boolean {
    return this.given !== null && this.given === this.current().answer;
  }

  describe(): TaskDescription {
    return {
      env: this.type,
      instruction: INSTRUCTION,
      legend: [],
      actions: [],
      actionHint: '\\boxed{integer}',
      example: '\\boxed{42}',
    };
  }

  reset(seed: number): string {
    this.problem = toolmathProblem(this.config, seed);
    this.given = null;
    return this.render();
  }

  /** The integer of the last \boxed{} in the text; text without one is not an answer. */
  matchAction(text: string): string | null {
    return boxedInteger(text);
  }

  step(action: string): StepResult {
    const problem = this.current();
    if (this.given !== null) throw episodeOver(this.type);
    this.given = boxedInteger(`\\boxed{${action}}`) ?? action;
    const correct = this.given === problem.answer;
    return {
      observation: this.render(),
      reward: correct ? 1 : 0,
      done: true,
      success: correct,
      info: { valid: true, effective: true, correct },
    };
  }

  render(): string {
    return this.current().text;
  }

  anchor(): string {
    return this.render();
  }

  snapshot(): EnvSnapshot {
    const p = this.current();
    return { kind: 'toolmath', problemKind: p.kind, text: p.text, answer: p.answer, code: p.code, given: this.given };
  }

  private current(): ToolmathProblem {
    if (!this.problem) throw new StarpoError('toolmath: reset(seed) before use');
    return this.problem;
  }
}

export const TOOLMATH: EnvDefinition<ToolmathConfig> = {
  defaults: {
    type: 'toolmath',
    kinds: [...TOOLMATH_KINDS],
    scale: 1,
    maxTurns: 1,
    maxActionsPerTurn: 1,
    maxActionsPerTrajectory: 1,
  },
  validate(c) {
    checkBudget(c);
    checkInteger('env.scale', c.scale, 1, 3);
    if (!Array.isArray(c.kinds) || c.kinds.length === 0) {
      throw new ConfigError('env.kinds', 'must be a non-empty list of kinds');
    }
    for (const kind of c.kinds) {
      if (!(TOOLMATH_KINDS as readonly string[]).includes(kind)) {
        throw new ConfigError('env.kinds', `unknown kind "${String(kind)}"; known: ${TOOLMATH_KINDS.join(', ')}`);
      }
    }
  },
  create: (c) => new ToolmathEnv(c),
  /** Every problem has its exact answer: a perfect agent always succeeds. */
  oracle: (c, seed) => ({ success: 1, detail: { answer: toolmathProblem(c, seed).answer } }),
  expert: (_c, snapshot) => [`\\boxed{${String(snapshot.answer)}}`],
  /** The problem's one-line solution, run in the code interpreter. */
  expertCalls: (_c, snapshot) => [{ kind: 'code', language: 'js', code: String(snapshot.code) }],
};
