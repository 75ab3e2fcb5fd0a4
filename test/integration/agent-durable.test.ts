/**
 * `train --agent` in the durable driver (Temporal workers in this process, Kafka, S3): the agent processes run
 * inside the rollout activities (2 shards, one group per chunk), and the run ends with the embedded driver's
 * weights and metrics — for the example Countdown agent, and for agents killed mid-episode (rerun, their
 * partial calls discarded once) against an embedded run without kills.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import type { RlConfig } from '../../src/rl/config.ts';
import { trainEmbedded } from '../../src/embedded/driver.ts';
import {
  createEventReader,
  createLocalEventReader,
  replay,
  type EventReader,
  type StarpoEvent,
} from '../../src/events/index.ts';
import { createCheckpointStore } from '../../src/storage/index.ts';
import { followRun, submitRun } from '../../src/durable/client.ts';
import { startLocalStack, uniqueId } from '../../src/durable/harness.ts';
import { writeTinyModel } from '../unit/rl/tiny-hf-model.ts';
import { agentConfig, EXAMPLE_AGENT, SCRIPTED_AGENT } from '../unit/rl/agent-run-config.ts';

Runtime.install({ logger: new DefaultLogger('WARN') });

const model = writeTinyModel(mkdtempSync(join(tmpdir(), 'starpo-agent-qwen3-')), 'qwen3', { dtype: 'BF16' });

async function events(reader: EventReader, runId: string): Promise<StarpoEvent[]> {
  const out: StarpoEvent[] = [];
  for await (const e of replay(reader, runId)) out.push(e);
  await reader.close();
  return out;
}

const metricsOf = (es: StarpoEvent[]) => es.flatMap((e) => (e.kind === 'iteration' ? [e.metrics] : []));
const trainKeys = (es: StarpoEvent[]) =>
  es.flatMap((e) =>
    e.kind === 'trajectory' && e.split === 'train' ? [`${e.iteration}/${e.group}/${e.rolloutIndex}`] : [],
  );

async function durableRun(c: RlConfig, label: string): Promise<{ durable: StarpoEvent[]; actor: Buffer }> {
  const stack = await startLocalStack({ label });
  try {
    const runId = uniqueId(label);
    const options = { queues: stack.queues, rolloutShards: 2, chunkGroups: 1 };
    const where = { client: stack.client, runId, storeUri: stack.storeUri, events: stack.events };
    const { handle } = await submitRun(c, { ...where, options });
    assert.equal((await followRun(handle, () => undefined, 500)).lastIteration, 2);
    const loaded = await createCheckpointStore(stack.storeUri).load(runId, 'main', 2);
    const actor = loaded.files.find((f) => f.name === 'actor.model.safetensors')!.bytes!;
    return { durable: await events(createEventReader({ kind: 'kafka', ...stack.events }), runId), actor };
  } finally {
    await stack.close();
  }
}

async function embeddedRun(c: RlConfig): Promise<{ embedded: StarpoEvent[]; actor: Buffer }> {
  const root = mkdtempSync(join(tmpdir(), 'starpo-agent-embedded-'));
  await trainEmbedded({ root, runId: 'r', config: c });
  const actor = readFileSync(join(root, 'r', 'checkpoints', 'main', '00000002', 'actor.model.safetensors'));
  return { embedded: await events(createLocalEventReader({ root }), 'r'), actor };
}

const SLOW = { timeout: 600_000 };

test('the example Countdown agent trains the same durable as embedded', SLOW, async () => {
  const c = agentConfig(await model, EXAMPLE_AGENT);
  const { embedded, actor } = await embeddedRun(c);
  const run = await durableRun(c, 'agent');
  assert.deepEqual(metricsOf(run.durable), metricsOf(embedded));
  assert.deepEqual(trainKeys(run.durable).sort(), trainKeys(embedded).sort());
  assert.ok(run.actor.equals(actor), "checkpoint 2 holds the embedded run's actor");
});

test(
  'agents killed mid-episode in rollout activities: the durable run equals the embedded one without kills',
  SLOW,
  async () => {
    const { embedded, actor } = await embeddedRun(agentConfig(await model, SCRIPTED_AGENT));
    const run = await durableRun(agentConfig(await model, `AGENT_KILL=odd ${SCRIPTED_AGENT}`), 'agentkill');
    const train = run.durable.flatMap((e) => (e.kind === 'trajectory' && e.split === 'train' ? [e] : []));
    assert.equal(new Set(trainKeys(run.durable)).size, train.length);
    assert.equal(train.length, 8);
    assert.equal(
      train.reduce((n, t) => n + Number(t.extras.discardedCalls), 0),
      4,
      'one call discarded per killed episode',
    );
    assert.deepEqual(metricsOf(run.durable), metricsOf(embedded));
    assert.ok(run.actor.equals(actor));
  },
);
