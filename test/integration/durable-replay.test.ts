import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Client } from '@temporalio/client';
import { DeterminismViolationError } from '@temporalio/workflow';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { resolveConfig } from '../../src/rl/config.ts';
import { followRun, submitRun } from '../../src/durable/client.ts';
import { startLocalStack, uniqueId } from '../../src/durable/harness.ts';
import { historyFromJSON, historyToJSON } from '../../src/durable/history-json.ts';
import { PROGRESS_QUERY, SIGNALS, type Progress } from '../../src/durable/protocol.ts';
import { WORKFLOWS_PATH } from '../../src/durable/worker.ts';

Runtime.install({ logger: new DefaultLogger('WARN') });

const DIR = fileURLToPath(new URL('../fixtures/histories/', import.meta.url));
const fixtures = () =>
  readdirSync(DIR)
    .filter((f) => /^training-run-v\d+-\d+\.json$/.test(f))
    .sort();
const histories = () =>
  fixtures().map((f) => ({ workflowId: f, history: historyFromJSON(JSON.parse(readFileSync(DIR + f, 'utf8'))) }));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(client: Client, workflowId: string, ok: (p: Progress) => boolean): Promise<void> {
  for (;;) {
    const p = await client.workflow
      .getHandle(workflowId)
      .query<Progress>(PROGRESS_QUERY)
      .catch(() => null);
    if (p && ok(p)) return;
    await sleep(200);
  }
}

/**
 * Runs a tiny 3-iteration run (continue-as-new after 2, paused and resumed once) and writes its histories;
 * STARPO_CAPTURE_SET adds config overrides (v2: asyncStaleness=1, whose rollouts cross the continue-as-new).
 */
async function capture(version: string): Promise<void> {
  const extra = (process.env.STARPO_CAPTURE_SET ?? '').split(',').filter((x) => x !== '');
  const config = resolveConfig({
    overrides: [
      'env=bandit',
      'envGroups=2',
      'groupSize=2',
      'miniBatchSize=1',
      'iterations=3',
      'threads=1',
      'valSeeds=2',
      'valEvery=2',
      'modelLayers=1',
      'modelHidden=16',
      'modelFfn=32',
      'maxResponseTokens=4',
      ...extra,
    ],
  });
  const stack = await startLocalStack({ label: 'history' });
  try {
    const options = { queues: stack.queues, continueAsNewEvery: 2 };
    const { handle } = await submitRun(config, {
      client: stack.client,
      runId: uniqueId('h'),
      storeUri: stack.storeUri,
      events: stack.events,
      options,
    });
    await until(stack.client, handle.workflowId, (p) => p.iteration >= 1);
    await handle.signal(SIGNALS.pause);
    await until(stack.client, handle.workflowId, (p) => p.stage === 'paused');
    await handle.signal(SIGNALS.resume);
    await followRun(handle, () => undefined, 300);
    let runId: string | undefined = handle.firstExecutionRunId;
    for (let n = 1; runId; n++) {
      const history = await stack.client.workflow.getHandle(handle.workflowId, runId).fetchHistory();
      writeFileSync(`${DIR}training-run-${version}-${n}.json`, historyToJSON(history));
      runId = history.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
    }
  } finally {
    await stack.close();
  }
}

test('committed workflow histories replay against the current workflow code', { timeout: 240_000 }, async () => {
  const version = process.env.STARPO_CAPTURE_HISTORIES;
  if (version) await capture(version);
  assert.ok(fixtures().length >= 2, 'no history fixtures: capture them with STARPO_CAPTURE_HISTORIES=v1');
  let replayed = 0;
  for await (const result of Worker.runReplayHistories({ workflowsPath: WORKFLOWS_PATH }, histories())) {
    assert.equal(result.error, undefined, `${result.workflowId}: ${result.error?.message}`);
    replayed++;
  }
  assert.equal(replayed, fixtures().length);
});

test(
  'a reordered workflow fails replay of the committed histories with a determinism violation',
  { timeout: 120_000 },
  async () => {
    const workflowsPath = fileURLToPath(new URL('../fixtures/histories/modified-workflow.ts', import.meta.url));
    const [first] = histories();
    const errors = [];
    for await (const result of Worker.runReplayHistories({ workflowsPath }, [first])) errors.push(result.error);
    assert.ok(errors[0] instanceof DeterminismViolationError, `expected a determinism violation, got ${errors[0]}`);
  },
);
