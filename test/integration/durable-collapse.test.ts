/**
 * onCollapse=fork in the durable driver, against the embedded driver on the same collapsing case
 * (test/unit/rl/collapse-fork.test.ts): Bandit with a learning rate 100× too large fires the detector at
 * iteration 10, forks back to checkpoint 0 with halved learning rates, collapses again (at 11 or 12, by CPU) and, with
 * maxForks 1, stops there. Both drivers must fork from the same checkpoint, record the same FORKED event
 * and end with the same metrics and checkpoint files.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { resolveConfig } from '../../src/rl/config.ts';
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

Runtime.install({ logger: new DefaultLogger('WARN') });

const config = resolveConfig({
  preset: 'starpo',
  overrides: [
    'env=bandit',
    'envGroups=4',
    'groupSize=8',
    'miniBatchSize=32',
    'iterations=12',
    'threads=1',
    'valSeeds=16',
    'valEvery=6',
    'sftSteps=60',
    'sftPolicy=random',
    'sftEpisodes=256',
    'lrActor=3e-2',
    'lrCritic=1e-3',
    'gradClip=1000',
    'collapseEvery=0',
    'keepEveryCheckpoint=1',
    'onCollapse=fork',
    'maxForks=1',
    // The case was tuned with the rows scored and trained apart; packing a group's prompt moves the last bits
    // enough that the fork no longer collapses again by iteration 12 (it runs to the end).
    'packPrefixes=false',
  ],
});

async function logged(reader: EventReader, runId: string, surviving: boolean): Promise<StarpoEvent[]> {
  const out: StarpoEvent[] = [];
  for await (const e of surviving ? replay(reader, runId) : reader.read(runId)) out.push(e);
  await reader.close();
  return out;
}

const metricsOf = (es: StarpoEvent[]) =>
  es.flatMap((e) => (e.kind === 'iteration' ? [[e.lineageId, e.iteration, e.metrics]] : []));
const forksOf = (es: StarpoEvent[]) =>
  es.flatMap((e) =>
    e.kind === 'run' && e.action === 'FORKED'
      ? [[e.lineageId, e.parentLineageId, e.fromIteration, e.forks, e.reason]]
      : [],
  );

test(
  'onCollapse=fork: the durable driver forks where the embedded one does and ends the same',
  { timeout: 900_000 },
  async () => {
    const root = mkdtempSync(join(tmpdir(), 'starpo-embedded-'));
    const embedded = await trainEmbedded({ root, runId: 'r', config });
    // Where the second collapse is seen depends on the processor: onnxruntime's CPU kernels differ between
    // instruction sets and a learning rate this large amplifies last-bit differences. Measured: 11 on the earlier
    // CI machines, 12 on an AMD EPYC without AVX-512. Either way the durable run must match this one.
    const last = embedded.lastIteration;
    assert.equal(embedded.lineageId, 'f1-0');
    assert.ok(last === 11 || last === 12, `stopped at ${last}`);
    const stack = await startLocalStack({ label: 'collapse' });
    try {
      const runId = uniqueId('collapse');
      const options = { queues: stack.queues, rolloutShards: 2, chunkGroups: 2 };
      const { handle } = await submitRun(config, {
        client: stack.client,
        runId,
        storeUri: stack.storeUri,
        events: stack.events,
        options,
      });
      const outcome = await followRun(handle, () => undefined, 500);
      assert.deepEqual([outcome.lastIteration, outcome.lineageId, outcome.stopped], [last, 'f1-0', true]);
      const reader = () => createEventReader({ kind: 'kafka', ...stack.events });
      const local = () => createLocalEventReader({ root });
      assert.deepEqual(metricsOf(await logged(reader(), runId, true)), metricsOf(await logged(local(), 'r', true)));
      const forks = forksOf(await logged(reader(), runId, false));
      assert.deepEqual(forks, forksOf(await logged(local(), 'r', false)));
      assert.deepEqual(
        forks.map((f) => f.slice(0, 4)),
        [['f1-0', 'main', 0, 1]],
      );
      const loaded = await createCheckpointStore(stack.storeUri).load(runId, 'f1-0', last);
      for (const f of loaded.files) {
        const mine = readFileSync(join(root, 'r', 'checkpoints', 'f1-0', String(last).padStart(8, '0'), f.name));
        assert.ok(mine.equals(f.bytes!), `${f.name} differs from the embedded run's`);
      }
    } finally {
      await stack.close();
    }
  },
);
