import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { resolveConfig } from '../../src/rl/config.ts';
import { trainEmbedded } from '../../src/rl/embedded.ts';
import { createEventReader, createLocalEventReader, replay, type EventReader, type StarpoEvent } from '../../src/events/index.ts';
import { createCheckpointStore } from '../../src/storage/index.ts';
import { followRun, submitRun } from '../../src/durable/client.ts';
import { startLocalStack, uniqueId } from '../../src/durable/harness.ts';

Runtime.install({ logger: new DefaultLogger('WARN') });

// Tiny but complete: warm-start, critic, KL reference, top-std filter, two mini-batches, validation.
const config = resolveConfig({
  preset: 'starpo-s',
  overrides: [
    'env=sokoban', 'maxTurns=2', 'envGroups=4', 'groupSize=4', 'filterFraction=0.5', 'miniBatchSize=4', 'iterations=2',
    'threads=1', 'valSeeds=4', 'valEvery=2', 'modelLayers=1', 'modelHidden=32', 'modelFfn=64', 'lrActor=1e-3',
    'lrCritic=1e-3', 'maxResponseTokens=8', 'klCoef=0.001', 'sftSteps=2', 'sftEpisodes=8', 'sftBatchSize=4',
  ],
});

async function events(reader: EventReader, runId: string): Promise<StarpoEvent[]> {
  const out: StarpoEvent[] = [];
  for await (const e of replay(reader, runId)) out.push(e);
  await reader.close();
  return out;
}

const metricsOf = (es: StarpoEvent[]) => es.flatMap((e) => (e.kind === 'iteration' ? [e.metrics] : []));
const count = (es: StarpoEvent[], split: string) => es.filter((e) => e.kind === 'trajectory' && e.split === split).length;
const FILES = ['actor.model.safetensors', 'actor.training_state.safetensors', 'critic.model.safetensors',
  'critic.training_state.safetensors', 'ref.model.safetensors', 'trainer.json'];

test('the durable driver ends with the weights and metrics of the embedded driver', { timeout: 240_000 }, async () => {
  const root = mkdtempSync(join(tmpdir(), 'starpo-embedded-'));
  await trainEmbedded({ root, runId: 'r', config });
  const embedded = await events(createLocalEventReader({ root }), 'r');

  const stack = await startLocalStack({ label: 'equiv' });
  try {
    const options = { queues: stack.queues, rolloutShards: 2, chunkGroups: 1 };
    const runId = uniqueId('equiv'); // the workflow id is global on the shared server
    const { handle } = await submitRun(config, { client: stack.client, runId, storeUri: stack.storeUri, events: stack.events, options });
    const outcome = await followRun(handle, () => undefined, 500);
    assert.equal(outcome.lastIteration, 2);
    const durable = await events(createEventReader({ kind: 'kafka', ...stack.events }), runId);
    assert.deepEqual(metricsOf(durable), metricsOf(embedded));
    assert.equal(metricsOf(durable).length, 2);
    assert.equal(count(durable, 'train'), 2 * 4 * 4);
    assert.equal(count(durable, 'val'), 4);
    const loaded = await createCheckpointStore(stack.storeUri).load(runId, 'main', 2, { only: FILES });
    for (const f of loaded.files) {
      const local = readFileSync(join(root, 'r', 'checkpoints', 'main', '00000002', f.name));
      assert.ok(local.equals(f.bytes!), `${f.name} differs from the embedded run's`);
    }
  } finally {
    await stack.close();
  }
});
