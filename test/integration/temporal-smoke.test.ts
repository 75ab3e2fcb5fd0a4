import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { endpoints } from '../../src/endpoints.ts';
import * as activities from './fixtures/smoke-activities.ts';

Runtime.install({ logger: new DefaultLogger('WARN') });

test('a workflow calls an activity through the real Temporal dev server', { timeout: 180_000 }, async () => {
  const env = await TestWorkflowEnvironment.createFromExistingServer({ address: endpoints.temporal.address });
  const taskQueue = `smoke-${randomUUID()}`;
  try {
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowsPath: new URL('./fixtures/smoke-workflow.ts', import.meta.url).pathname,
      activities,
    });
    const result = await worker.runUntil(
      env.client.workflow.execute('smokeWorkflow', {
        taskQueue,
        workflowId: `smoke-${randomUUID()}`,
        args: ['starpo'],
      }),
    );
    assert.equal(result, 'workflow saw: hello starpo from activity greet');
  } finally {
    await env.teardown();
  }
});
