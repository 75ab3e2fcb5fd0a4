/**
 * The metric keys that code reads back, one constant each: producers (rl/metrics.ts, the update stage, the
 * collapse probe, tool rewards) write them, and progress lines, iteration events, reports, benchmarks and
 * the workflow's progress query read them. What each one means is defined beside its producer
 * (rl/metrics.ts for the batch metrics). Keys only ever written (and shown whole) stay where they are made.
 * No imports and no Node built-ins: workflow code reads these too.
 */

/** Validation's copy of a metric: the same key under `val/`. */
export const valMetric = <K extends string>(key: K): `val/${K}` => `val/${key}`;

/** The update stage's metrics of one model: the engine's train_step metric under `actor/` or `critic/`. */
export const modelMetric = <M extends 'actor' | 'critic', K extends string>(model: M, key: K): `${M}/${K}` =>
  `${model}/${key}`;

export const SUCCESS_RATE = 'success_rate';
export const RETURN_MEAN = 'return/mean';
export const RETURN_STD = 'return/std';
export const IN_GROUP_STD_ALL = 'in_group_std/all';
export const IN_GROUP_STD_KEPT = 'in_group_std/kept';
export const ENTROPY_MEAN = 'entropy/mean';
export const RESPONSE_LENGTH_MEAN = 'response_length/mean';
export const TOKENS_GENERATED = 'tokens/generated';
export const KEPT_TOKENS = 'kept/tokens';
/** pass@k over the groups of at least k trajectories. */
export const passAtKMetric = (k: number): `pass@${number}` => `pass@${k}`;

export const VAL_SUCCESS_RATE = valMetric(SUCCESS_RATE);

export const ACTOR_GRAD_NORM = modelMetric('actor', 'grad_norm');
export const ACTOR_CLIP_FRAC = modelMetric('actor', 'clip_frac');
export const ACTOR_APPROX_KL = modelMetric('actor', 'approx_kl');
export const ACTOR_KL_REF = modelMetric('actor', 'kl_ref');
/** 1 when the actor's update was skipped: no trained token had a non-zero advantage (skipNoSignal). */
export const ACTOR_NO_SIGNAL = modelMetric('actor', 'no_signal');
export const CRITIC_GRAD_NORM = modelMetric('critic', 'grad_norm');
export const CRITIC_VALUE_LOSS = modelMetric('critic', 'value_loss');

export const COLLAPSE_MI_ESTIMATE = 'collapse/mi_estimate';
export const COLLAPSE_MI_UPPER_BOUND = 'collapse/mi_upper_bound';
export const COLLAPSE_RETRIEVAL_ACCURACY = 'collapse/retrieval_accuracy';
export const COLLAPSE_RETRIEVAL_CHANCE_LEVEL = 'collapse/retrieval_chance_level';

export const TOOL_CALLS_PER_RESPONSE = 'tool/calls_per_response';
export const TOOL_PRODUCTIVITY = 'tool/productivity';

/** Written both by the trainer and by replay's recomputation from events (replay/recompute.ts), which must agree. */
export const BATCH_TRAINED_TRAJECTORIES = 'batch/trained_trajectories';
export const BATCH_TRUNCATED = 'batch/truncated';
export const ASYNC_POLICY_LAG = 'async/policy_lag';
export const VALUES_EXPLAINED_VARIANCE = 'values/explained_variance';
export const FILTER_IN_GROUP_STD_ALL = 'filter/in_group_std_all';
export const FILTER_IN_GROUP_STD_KEPT = 'filter/in_group_std_kept';

/** The few metrics an iteration is summed up by, in logs, progress bars and a durable run's status. */
export interface HeadlineMetrics<T = number> {
  success?: T;
  /** Only on iterations that validate. */
  valSuccess?: T;
  inGroupStd?: T;
  entropy?: T;
  gradNorm?: T;
}

/** `T`: the metrics' values (a durable run's wire metrics carry null where a value was not finite). */
export function headlineMetrics<T = number>(m: Readonly<Record<string, T>>): HeadlineMetrics<T> {
  return {
    success: m[SUCCESS_RATE],
    valSuccess: m[VAL_SUCCESS_RATE],
    inGroupStd: m[IN_GROUP_STD_ALL],
    entropy: m[ENTROPY_MEAN],
    gradNorm: m[ACTOR_GRAD_NORM],
  };
}
