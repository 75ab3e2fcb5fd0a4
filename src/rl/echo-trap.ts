/**
 * Echo-Trap detector (docs/spec.md §5): warns when the collapse pattern begins — in-group reward std falls, token
 * entropy falls, and the actor's gradient norm spikes. Not every collapse spikes: with an over-large
 * learning rate the policy can turn deterministic with ever smaller gradients (measured: FrozenLake,
 * lr 3e-3, grad norm 1.0 → 0.07 while success fell from 0.45 to 0.13), so a fall in success confirms the
 * pattern too. Std and entropy also fall in a healthy run that converges, but there success stays at its
 * best, so it does not fire; nor while this iteration's success is at least `saturatedSuccess`: when (nearly)
 * every episode succeeds the in-group std and the entropy have nowhere to go but down, and a spike then is a
 * step on the last few failures (measured: SmolLM2 BanditReversed under Dr. GRPO, 100% at both validations,
 * fired at iteration 10 on a spike at 8, where one dip to 56% trained).
 *
 * Rule, evaluated after each iteration's observation:
 *   smoothed x      = mean of the last `window` finite values of x (one bad iteration moves it by 1/window)
 *   std falling     = smoothed std < stdDropFraction · running max of smoothed std
 *   entropy falling = smoothed entropy < entropyDropFraction · running max of smoothed entropy
 *   grad spike      = grad norm > gradSpikeFactor · median of the previous `gradMedianWindow` finite grad
 *                     norms (at least 3 of them), or a non-finite grad norm; it stays recent for
 *                     `spikeLookback` iterations because the spike need not land on the same iteration
 *   success falling = smoothed success < successDropFraction · running max of smoothed success
 *   fire            = armed ∧ observations ≥ warmup ∧ success < saturatedSuccess ∧ std falling ∧ entropy falling
 *                     ∧ (recent spike ∨ success falling)
 * After firing the detector disarms; it re-arms once smoothed std recovers to ≥ rearmFraction · its running
 * max, so one collapse gives one warning. The evidence names the first warning sign (firstSignIteration,
 * what onCollapse=fork rewinds before): the earliest of the spike, the oldest observation inside the
 * first smoothed window of the current unbroken run with std falling — the fall shows in the smoothed std
 * up to window − 1 iterations after it began — and, when success fell, the last iteration at which smoothed
 * success stood at its running max. The last matters when the learning rate is far too large: success can
 * fall from the first update while std stays up for ten more (measured: FrozenLake, lr 3e-3, success 0.46 →
 * 0.02 by iteration 6, std falling from 12), and rewinding to the std's sign lands in the collapse. The core
 * is a pure function of (state, observation); the class only holds the state, which is plain JSON for
 * checkpoints.
 */
import { ConfigError } from '../errors.ts';
import { mean, median } from './stats.ts';

export interface EchoTrapObservation {
  readonly iteration: number;
  /** Mean over groups of the in-group std of trajectory returns (in_group_std/all). */
  readonly inGroupRewardStd: number;
  /** Token entropy mean over the loss mask. */
  readonly entropy: number;
  /**
   * Actor gradient norm before clipping; null when the actor took no step (no signal, or no row kept): such an
   * iteration is neither a spike nor part of the baseline, which zeros would otherwise drag to 0 (then any step
   * that follows a run of skipped ones looks like a spike).
   */
  readonly gradNorm: number | null;
  readonly successRate: number;
}

export interface EchoTrapConfig {
  /** Iterations in the moving averages of std and entropy (5): long enough to ignore a one-off dip. */
  readonly window: number;
  /** Observations before the detector may fire (10): the running maxima need a healthy history first. */
  readonly warmup: number;
  /** Std counts as fallen below this fraction of its running max (0.5). */
  readonly stdDropFraction: number;
  /** Entropy counts as fallen below this fraction of its running max (0.8): entropy moves less than std. */
  readonly entropyDropFraction: number;
  /** Previous grad norms whose median is the spike baseline (10). */
  readonly gradMedianWindow: number;
  /** A grad norm above this multiple of the baseline median is a spike (3). */
  readonly gradSpikeFactor: number;
  /** Iterations a spike stays recent (5). */
  readonly spikeLookback: number;
  /** Re-arm once smoothed std is back to this fraction of its running max (0.8). */
  readonly rearmFraction: number;
  /** Success counts as fallen below this fraction of its smoothed running max (0.7). */
  readonly successDropFraction: number;
  /** An iteration whose success is at least this never fires (0.95): a run that solves nearly all is not trapped. */
  readonly saturatedSuccess: number;
}

export const ECHO_TRAP_DEFAULTS: EchoTrapConfig = Object.freeze({
  window: 5,
  warmup: 10,
  stdDropFraction: 0.5,
  entropyDropFraction: 0.8,
  gradMedianWindow: 10,
  gradSpikeFactor: 3,
  spikeLookback: 5,
  rearmFraction: 0.8,
  successDropFraction: 0.7,
  saturatedSuccess: 0.95,
});

export interface GradSpike {
  iteration: number;
  gradNorm: number;
  median: number;
}

/** Everything the detector remembers; plain JSON (no Infinity: maxima start at 0, values are ≥ 0). */
export interface EchoTrapState {
  observations: number;
  armed: boolean;
  stdHistory: number[];
  entropyHistory: number[];
  gradHistory: number[];
  stdMax: number;
  entropyMax: number;
  successMax: number;
  /** Last `window` success rates and the running max of their mean (absent in states saved before them). */
  successHistory?: number[];
  successSmoothedMax?: number;
  /** Last iteration at which smoothed success equalled its running max (absent in older states). */
  successPeakIteration?: number;
  lastSpike: GradSpike | null;
  /** First iteration of the current unbroken run with std falling; null when it is not (absent in older states). */
  stdLowSince?: number | null;
}

export interface EchoTrapWarning {
  readonly iteration: number;
  readonly evidence: Record<string, number>;
  readonly message: string;
}

export function initialEchoTrapState(): EchoTrapState {
  const s = { observations: 0, armed: true, stdHistory: [], entropyHistory: [], gradHistory: [], successHistory: [] };
  return { ...s, stdMax: 0, entropyMax: 0, successMax: 0, successSmoothedMax: 0, lastSpike: null };
}

/** Validates a partial config over the defaults; errors name the field as echoTrap.<name>. */
export function resolveEchoTrapConfig(partial: Partial<EchoTrapConfig> = {}): EchoTrapConfig {
  const c = { ...ECHO_TRAP_DEFAULTS, ...partial };
  const ints = ['window', 'warmup', 'gradMedianWindow', 'spikeLookback'] as const;
  for (const k of ints) {
    if (!Number.isInteger(c[k]) || c[k] < 1) throw new ConfigError(`echoTrap.${k}`, 'must be an integer ≥ 1');
  }
  const fractions = ['stdDropFraction', 'entropyDropFraction', 'rearmFraction', 'successDropFraction'] as const;
  for (const k of [...fractions, 'saturatedSuccess'] as const) {
    if (!(c[k] > 0 && c[k] <= 1)) throw new ConfigError(`echoTrap.${k}`, 'must be in (0, 1]');
  }
  if (!(c.gradSpikeFactor > 1)) throw new ConfigError('echoTrap.gradSpikeFactor', 'must be > 1');
  if (c.rearmFraction < c.stdDropFraction) {
    throw new ConfigError('echoTrap.rearmFraction', 'must be ≥ stdDropFraction');
  }
  return Object.freeze(c);
}

const pushLast = (xs: readonly number[], x: number, n: number): number[] =>
  Number.isFinite(x) ? [...xs, x].slice(-n) : [...xs];

function detectSpike(state: EchoTrapState, obs: EchoTrapObservation, c: EchoTrapConfig): GradSpike | null {
  const base = median(state.gradHistory);
  const enough = state.gradHistory.length >= 3;
  if (obs.gradNorm === null) return state.lastSpike;
  const spiked = !Number.isFinite(obs.gradNorm) || (enough && obs.gradNorm > c.gradSpikeFactor * base);
  if (spiked) return { iteration: obs.iteration, gradNorm: obs.gradNorm, median: base };
  return state.lastSpike;
}

/** One step of the detector: the next state and a warning when the collapse pattern starts here. */
export function observeEchoTrap(
  state: EchoTrapState,
  obs: EchoTrapObservation,
  config: EchoTrapConfig = ECHO_TRAP_DEFAULTS,
): { state: EchoTrapState; warning: EchoTrapWarning | null } {
  const stdHistory = pushLast(state.stdHistory, obs.inGroupRewardStd, config.window);
  const entropyHistory = pushLast(state.entropyHistory, obs.entropy, config.window);
  const successHistory = pushLast(state.successHistory ?? [], obs.successRate, config.window);
  const std = mean(stdHistory);
  const entropy = mean(entropyHistory);
  const success = mean(successHistory);
  const next: EchoTrapState = {
    observations: state.observations + 1,
    armed: state.armed,
    stdHistory,
    entropyHistory,
    gradHistory:
      obs.gradNorm === null ? state.gradHistory : pushLast(state.gradHistory, obs.gradNorm, config.gradMedianWindow),
    stdMax: Math.max(state.stdMax, std),
    entropyMax: Math.max(state.entropyMax, entropy),
    successMax: Math.max(state.successMax, Number.isFinite(obs.successRate) ? obs.successRate : 0),
    successHistory,
    successSmoothedMax: Math.max(state.successSmoothedMax ?? 0, success),
    lastSpike: detectSpike(state, obs, config),
    stdLowSince: null,
  };
  const successPeak = success >= (state.successSmoothedMax ?? 0) ? obs.iteration : state.successPeakIteration;
  if (successPeak !== undefined) next.successPeakIteration = successPeak;
  if (std < config.stdDropFraction * next.stdMax) next.stdLowSince = state.stdLowSince ?? obs.iteration;
  if (!next.armed) {
    next.armed = std >= config.rearmFraction * next.stdMax;
    return { state: next, warning: null };
  }
  const spike =
    next.lastSpike !== null && obs.iteration - next.lastSpike.iteration < config.spikeLookback ? next.lastSpike : null;
  const successFell = success < config.successDropFraction * (next.successSmoothedMax ?? 0);
  const fire =
    next.observations >= config.warmup &&
    !(obs.successRate >= config.saturatedSuccess) &&
    std < config.stdDropFraction * next.stdMax &&
    entropy < config.entropyDropFraction * next.entropyMax &&
    (spike !== null || successFell);
  if (!fire) return { state: next, warning: null };
  next.armed = false;
  return { state: next, warning: warningOf(obs, config, next, { std, entropy, success, successFell }, spike) };
}

function warningOf(
  obs: EchoTrapObservation,
  c: EchoTrapConfig,
  s: EchoTrapState,
  smoothed: { std: number; entropy: number; success: number; successFell: boolean },
  spike: GradSpike | null,
): EchoTrapWarning {
  const { std, entropy, success, successFell } = smoothed;
  const fallBegan = (s.stdLowSince ?? obs.iteration) - (c.window - 1);
  const successPeak = successFell ? s.successPeakIteration : undefined;
  const firstSign = Math.max(1, Math.min(fallBegan, spike?.iteration ?? obs.iteration, successPeak ?? obs.iteration));
  const evidence = {
    inGroupRewardStd: std,
    inGroupRewardStdMax: s.stdMax,
    entropy,
    entropyMax: s.entropyMax,
    ...(spike ? { gradNorm: spike.gradNorm, gradNormMedian: spike.median, spikeIteration: spike.iteration } : {}),
    successRate: obs.successRate,
    successRateMax: s.successMax,
    ...(spike ? {} : { successSmoothed: success, successSmoothedMax: s.successSmoothedMax ?? 0 }),
    ...(successPeak !== undefined ? { successPeakIteration: successPeak } : {}),
    firstSignIteration: firstSign,
  };
  const f = (x: number) => x.toPrecision(3);
  const trigger = spike
    ? `grad-norm spike ${f(spike.gradNorm)} at iteration ${spike.iteration} (median ${f(spike.median)})`
    : `no grad-norm spike, but smoothed success ${f(success)} fell from ${f(s.successSmoothedMax ?? 0)}`;
  const message =
    `Echo Trap suspected at iteration ${obs.iteration}: in-group reward std ${f(std)} (max ${f(s.stdMax)}), ` +
    `entropy ${f(entropy)} (max ${f(s.entropyMax)}), ${trigger}; success ${f(obs.successRate)} (max ` +
    `${f(s.successMax)})`;
  return { iteration: obs.iteration, evidence, message };
}

/** Stateful wrapper for the trainer: feed one iteration at a time; `state` goes into the checkpoint. */
export class EchoTrapDetector {
  readonly config: EchoTrapConfig;
  #state: EchoTrapState;

  constructor(config: Partial<EchoTrapConfig> = {}, state: EchoTrapState = initialEchoTrapState()) {
    this.config = resolveEchoTrapConfig(config);
    this.#state = structuredClone(state);
  }

  observe(obs: EchoTrapObservation): EchoTrapWarning | null {
    const { state, warning } = observeEchoTrap(this.#state, obs, this.config);
    this.#state = state;
    return warning;
  }

  /** A deep copy of the state (plain JSON). */
  get state(): EchoTrapState {
    return structuredClone(this.#state);
  }

  toJSON(): { config: EchoTrapConfig; state: EchoTrapState } {
    return { config: this.config, state: this.state };
  }

  static fromJSON(json: { config: Partial<EchoTrapConfig>; state: EchoTrapState }): EchoTrapDetector {
    return new EchoTrapDetector(json.config, json.state);
  }
}
