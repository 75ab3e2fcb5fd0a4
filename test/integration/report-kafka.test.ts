/** The report built from a durable run's events on Kafka (the local broker, a fresh topic). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createKafkaEventLog } from '../../src/events/index.ts';
import { loadReport } from '../../src/report/load.ts';
import { openSource } from '../../src/report/source.ts';
import { iteration, run, trajectory, warning } from '../unit/report/fixtures.ts';

const T90 = { timeout: 90_000 };

test('a report reads a run from Kafka: iterations, warnings and trajectories, retried writes once', T90, async () => {
  const topic = `report-test-${randomUUID()}`;
  const log = createKafkaEventLog({ topic });
  const events = [run('k'), trajectory(1, 0, 0, 'train', 'k'), iteration(1, { success_rate: 0.5 }, 'k'),
    warning(1, 'k')];
  await log.append(events);
  await log.append([iteration(1, { success_rate: 0.5 }, 'k')]);  // a retried activity writes it again
  await log.close();
  const source = openSource(['k'], { kind: 'kafka', kafka: { topic } });
  try {
    const model = await loadReport(source);
    const [r] = model.runs;
    assert.deepEqual([r.runId, r.env, r.lastIteration, r.iterations.length, r.warnings.length, r.trajectories.length],
      ['k', 'sokoban', 1, 1, 1, 1]);
    assert.deepEqual(model.charts.find((c) => c.id === 'success')!.markers,
      [{ run: 'k', iteration: 1, message: 'entropy fell' }]);
  } finally {
    await source.close();
  }
});
