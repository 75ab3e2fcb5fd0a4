/**
 * Activity stubs of the trainingRun workflow, per task queue, with their timeouts and retry policy.
 * Long activities heartbeat, so the heartbeat timeout (not the start-to-close one) is what notices a
 * dead worker; errors whose type is in NON_RETRYABLE_TYPES (bad config, corrupt data) fail at once.
 */
import { proxyActivities, type ActivityOptions } from '@temporalio/workflow';
import type { RolloutActivities, UpdateActivities } from '../activities/index.ts';
import { NON_RETRYABLE_TYPES, type DurableOptions } from '../src/durable/protocol.ts';

/** Each task queue's proxy offers only that queue's activities, so a stage cannot be scheduled on the wrong queue. */
export interface Stages {
  /** Rollout shards and validation. */
  rollout: RolloutActivities;
  /** Everything else, on the GPU worker's queue. */
  update: UpdateActivities;
}

/** The options every activity is scheduled with: the run's heartbeat timeout and attempts, from its input. */
export function activityOptions(o: DurableOptions) {
  return {
    startToCloseTimeout: '4 hours',
    heartbeatTimeout: o.heartbeatTimeoutMs,
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: '30 seconds',
      maximumAttempts: o.maxAttempts,
      nonRetryableErrorTypes: NON_RETRYABLE_TYPES,
    },
  } satisfies ActivityOptions;
}

export function stageActivities(o: DurableOptions): Stages {
  const common = activityOptions(o);
  return {
    rollout: proxyActivities<RolloutActivities>({ ...common, taskQueue: o.queues.rollout }),
    update: proxyActivities<UpdateActivities>({ ...common, taskQueue: o.queues.update }),
  };
}
