import { ConfigError, StarpoError } from '../errors.ts';
import { checkBudget, checkNumber, episodeOver, vocabularyMatcher } from './common.ts';
import { Prng } from './prng.ts';
import type { Env, EnvConfigBase, EnvDefinition, EnvSnapshot, StepResult, TaskDescription } from './types.ts';

/**
 * Two-armed bandit, one turn, one action. The arms' payouts are hidden; only their names hint at
 * them. Success = pulling the arm designated "high" (higher expected value), whatever it paid.
 *
 * Low-arm payout: 0.1 (RAGEN's code; the paper's text says 0.15). Either keeps the low arm below the
 * high arm's expected 0.25; 0.1 makes the gap larger, so the signal does not hinge on a few draws.
 */
export interface BanditConfig extends EnvConfigBase {
  type: 'bandit';
  lowArm: string;
  highArm: string;
  /** Always paid by the low arm. */
  lowPayout: number;
  /** Paid by the high arm with probability `highProbability`, else 0. */
  highPayout: number;
  highProbability: number;
}

const ORDER_STREAM = 0;
const PAYOUT_STREAM = 1;

export class BanditEnv implements Env {
  readonly type = 'bandit';
  private arms: string[] = [];
  private seed = -1;
  private chosen: string | null = null;
  readonly matchAction: (text: string) => string | null;

  constructor(private readonly config: BanditConfig) {
    this.matchAction = vocabularyMatcher([config.lowArm, config.highArm]);
  }

  get done(): boolean {
    return this.chosen !== null;
  }

  get success(): boolean {
    return this.chosen === this.config.highArm;
  }

  describe(): TaskDescription {
    const [a, b] = this.arms.length ? this.arms : [this.config.lowArm, this.config.highArm];
    return {
      env: this.type,
      instruction:
        `You are playing a bandit game. There are two arms, named ${a} and ${b}. Each arm has its own reward ` +
        'distribution, related to its name. Think about what the names symbolise and pull the arm you expect to give ' +
        'the higher reward on average.',
      legend: [],
      actions: this.arms.length ? this.arms : [this.config.lowArm, this.config.highArm],
      actionHint: a as string,
    };
  }

  reset(seed: number): string {
    this.arms = new Prng(seed, ORDER_STREAM).shuffled([this.config.lowArm, this.config.highArm]);
    this.seed = seed;
    this.chosen = null;
    return this.render();
  }

  step(action: string): StepResult {
    if (this.seed < 0) throw new StarpoError('bandit: reset(seed) before use');
    if (this.chosen !== null) throw episodeOver(this.type);
    const { lowArm, highArm, lowPayout, highPayout, highProbability } = this.config;
    if (action !== lowArm && action !== highArm) throw new StarpoError(`bandit: unknown arm "${action}"`);
    this.chosen = action;
    const lucky = new Prng(this.seed, PAYOUT_STREAM).float() < highProbability;
    const reward = action === lowArm ? lowPayout : lucky ? highPayout : 0;
    const info = { valid: true, effective: true };
    return { observation: this.render(), reward, done: true, success: this.success, info };
  }

  render(): string {
    return `Arms: ${this.arms.join(', ')}` + (this.chosen ? `\nPulled: ${this.chosen}` : '');
  }

  anchor(): string {
    return this.render();
  }

  snapshot(): EnvSnapshot {
    return { kind: 'bandit', env: this.type, arms: this.arms, high: this.config.highArm, chosen: this.chosen };
  }
}

/** Registry entry. Defaults = the paper's training pair Phoenix (low) / Dragon (high). */
export const BANDIT: EnvDefinition<BanditConfig> = {
  defaults: {
    type: 'bandit',
    lowArm: 'Phoenix',
    highArm: 'Dragon',
    lowPayout: 0.1,
    highPayout: 1,
    highProbability: 0.25,
    maxTurns: 1,
    maxActionsPerTurn: 1,
    maxActionsPerTrajectory: 1,
  },
  validate(c) {
    checkBudget(c);
    for (const field of ['lowArm', 'highArm'] as const) {
      if (typeof c[field] !== 'string' || !/^[A-Za-z][A-Za-z -]{0,31}$/.test(c[field])) {
        throw new ConfigError(`env.${field}`, 'must be a name of letters, spaces or hyphens (at most 32)');
      }
    }
    if (c.lowArm.toLowerCase() === c.highArm.toLowerCase())
      throw new ConfigError('env.highArm', 'must differ from lowArm');
    checkNumber('env.lowPayout', c.lowPayout, -1e6, 1e6);
    checkNumber('env.highPayout', c.highPayout, -1e6, 1e6);
    checkNumber('env.highProbability', c.highProbability, 0, 1);
  },
  create: (c) => new BanditEnv(c),
  /** Always pulling the high arm succeeds; the detail gives each arm's expected value. */
  oracle: (c) => ({
    success: 1,
    detail: { lowExpected: c.lowPayout, highExpected: c.highPayout * c.highProbability },
  }),
  expert: (_c, snapshot) => [snapshot.high as string],
};
