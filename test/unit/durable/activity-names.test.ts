/**
 * Activity names are part of every workflow history Temporal keeps: a worker must keep serving a name that
 * running workflows still schedule. The publish activity was `checkpoint` before 2026-12-06 (the update writes
 * the checkpoint); histories without the publish-activity marker replay that name (test/fixtures/histories).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRolloutActivities, createUpdateActivities } from '../../../activities/index.ts';
import type { WorkerResources } from '../../../src/durable/resources.ts';

// Building the activities only closes over the resources; none is used until an activity runs.
const resources = {} as WorkerResources;

test('the update queue serves publish under its new name and its old one; the rollout queue serves neither', () => {
  const update = createUpdateActivities(resources);
  assert.equal(typeof update.publish, 'function');
  assert.equal(typeof update.checkpoint, 'function');
  const rollout: Record<string, unknown> = createRolloutActivities(resources);
  assert.ok(!('publish' in rollout) && !('checkpoint' in rollout));
  assert.deepEqual(Object.keys(update).sort(), [
    'advantage',
    'checkpoint',
    'filter',
    'forkPoint',
    'planSampling',
    'publish',
    'reward',
    'score',
    'startRun',
    'update',
  ]);
});
