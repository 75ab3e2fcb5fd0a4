import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { WorkflowHandle } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { resolveConfig } from '../../src/rl/config.ts';
import { runStatus, submitRun } from '../../src/durable/client.ts';
import { startLocalStack, uniqueId } from '../../src/durable/harness.ts';
import { PROGRESS_QUERY, SIGNALS, type Progress, type RunOutcome } from '../../src/durable/protocol.ts';
import { createCheckpointStore } from '../../src/storage/index.ts';
import { statusLines } from '../../src/cli/commands/status.ts';

Runtime.install({ logger: new DefaultLogger('WARN') });

const config = resolveConfig({
  overrides: [
    'env=bandit',
    'envGroups=2',
    'groupSize=2',
    'miniBatchSize=1',
    'iterations=20',
    'threads=1',
    'valSeeds=2',
    'valEvery=0',
    'modelLayers=1',
    'modelHidden=16',
    'modelFfn=32',
    'maxResponseTokens=4',
  ],
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const progress = (h: WorkflowHandle) => h.query<Progress>(PROGRESS_QUERY);

async function until(h: WorkflowHandle, ok: (p: Progress) => boolean): Promise<Progress> {
  for (;;) {
    const p = await progress(h).catch(() => null);
    if (p && ok(p)) return p;
    await sleep(100);
  }
}

test(
  'pause holds a run at an iteration boundary, resume continues it, stop ends it after a checkpointed iteration',
  { timeout: 120_000 },
  async () => {
    const stack = await startLocalStack({ label: 'signals' });
    try {
      const runId = uniqueId('signals');
      const { handle } = await submitRun(config, {
        client: stack.client,
        runId,
        storeUri: stack.storeUri,
        events: stack.events,
        options: { queues: stack.queues },
      });
      await until(handle, (p) => p.iteration >= 1);
      await handle.signal(SIGNALS.pause);
      const paused = await until(handle, (p) => p.stage === 'paused');
      await sleep(1500);
      assert.equal((await progress(handle)).iteration, paused.iteration, 'no iteration runs while paused');
      const lines = statusLines(runId, await runStatus(runId, { client: stack.client }));
      assert.match(
        lines[0],
        new RegExp(
          `^run ${runId}: workflow starpo-${runId} RUNNING; lineage main; iteration ${paused.iteration}/20; ` +
            'stage paused \\(paused\\)',
        ),
      );
      await handle.signal(SIGNALS.resume);
      await until(handle, (p) => p.iteration > paused.iteration);
      await handle.signal(SIGNALS.stop);
      const outcome = (await handle.result()) as RunOutcome;
      assert.equal(outcome.stopped, true);
      assert.ok(
        outcome.lastIteration > paused.iteration && outcome.lastIteration < 20,
        `stopped at ${outcome.lastIteration}`,
      );
      const latest = await createCheckpointStore(stack.storeUri).latest(runId, 'main');
      assert.equal(latest?.iteration, outcome.lastIteration);
    } finally {
      await stack.close();
    }
  },
);
