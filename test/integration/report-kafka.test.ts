/** The report built from a durable run's events on Kafka (the local broker, a fresh topic). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createKafkaEventLog } from '../../src/events/index.ts';
import { loadReport } from '../../src/report/load.ts';
import { openSource } from '../../src/report/source.ts';
import { checkpointEvent } from '../../src/run/events.ts';
import { scratchTokenizer } from '../../src/rl/vocabulary.ts';
import { createS3CheckpointStore } from '../../src/storage/s3-store.ts';
import { iteration, run, trajectory, warning } from '../unit/report/fixtures.ts';

const T90 = { timeout: 90_000 };

test('a report reads a run from Kafka: iterations, warnings and trajectories, retried writes once', T90, async () => {
  const topic = `report-test-${randomUUID()}`;
  const log = createKafkaEventLog({ topic });
  const events = [
    run('k'),
    trajectory(1, 0, 0, 'train', 'k'),
    iteration(1, { success_rate: 0.5 }, 'k'),
    warning(1, 'k'),
  ];
  await log.append(events);
  await log.append([iteration(1, { success_rate: 0.5 }, 'k')]); // a retried activity writes it again
  await log.close();
  const source = openSource(['k'], { kind: 'kafka', kafka: { topic } });
  try {
    const model = await loadReport(source);
    const [r] = model.runs;
    assert.deepEqual(
      [r.runId, r.env, r.lastIteration, r.iterations.length, r.warnings.length, r.trajectories.length],
      ['k', 'sokoban', 1, 1, 1, 1],
    );
    assert.deepEqual(model.charts.find((c) => c.id === 'success')!.markers, [
      { run: 'k', iteration: 1, message: 'entropy fell' },
    ]);
  } finally {
    await source.close();
  }
});

test("a durable run's tokens are decoded with the tokenizer its checkpoint holds in S3", T90, async () => {
  const chars = scratchTokenizer();
  const store = createS3CheckpointStore({ bucket: `report-${randomUUID()}` });
  const files = Object.entries(chars.toFiles()).map(([name, text]) => ({
    name: `actor.${name}`,
    bytes: Buffer.from(text),
  }));
  const saved = await store.save('d', 'main', 1, files);
  assert.match(saved.uri, /^s3:\/\//);
  const ids = chars.encode('Go\n>Up\n');
  // the model wrote the stop
  const logged = { ...trajectory(1, 0, 0, 'train', 'd'), tokenIds: ids, tokenRoles: '2200444' };
  const topic = `report-test-${randomUUID()}`;
  const log = createKafkaEventLog({ topic });
  const config = { env: 'sokoban', iterations: 1, valSeeds: 0, template: 'compact' };
  await log.append([run('d', config), checkpointEvent(saved), logged]);
  await log.close();
  const source = openSource(['d'], { kind: 'kafka', kafka: { topic } });
  try {
    const [r] = (await loadReport(source)).runs;
    assert.deepEqual([r.tokens.tokenizer, r.tokens.stop], ['checkpoint main/00000001', chars.encode('\n')]);
    assert.equal(ids.map((id) => r.tokens.text[id]).join(''), 'Go\n>Up\n');
    assert.deepEqual(r.trajectories[0].tokens!.audit.responses, [{ start: 4, end: 7, stop: true }]);
  } finally {
    await source.close();
  }
});
