/**
 * The stages of an iteration by name, one list for both drivers: the keys of an IterationEvent's stage timings and
 * the stages a durable run reports as its progress. The durable driver times reward and filter inside `score` (the
 * three run side by side) and the collapse probe inside it too; `rollout_play` is an asynchronous run's own rollout
 * time, apart from the wait the `rollout` stage records.
 */
export const STAGE_NAMES = [
  'rollout',
  'rollout_play',
  'collapse',
  'reward',
  'filter',
  'score',
  'advantage',
  'update',
  'validate',
  'publish',
] as const;

export type StageName = (typeof STAGE_NAMES)[number];
