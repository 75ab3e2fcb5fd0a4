import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { replay, replayEvents, type DropReason } from '../../../src/events/replay.ts';
import { createLocalEventLog } from '../../../src/events/local-log.ts';
import { createLocalEventReader } from '../../../src/events/local-reader.ts';
import { eventKey } from '../../../src/events/event-key.ts';
import type { StarpoEvent } from '../../../src/events/types.ts';
import { checkpointEvent, iterationEvent, runEvent, trajectory } from './fixtures.ts';

/** L0 runs iterations 1-3 and crashes after writing trajectories of 3; L1 resumes from checkpoint 2. */
function crashAndResume(): StarpoEvent[] {
  return [
    runEvent('L0'),
    trajectory('L0', 1),
    iterationEvent('L0', 1),
    checkpointEvent('L0', 1),
    trajectory('L0', 2),
    iterationEvent('L0', 2),
    checkpointEvent('L0', 2),
    trajectory('L0', 3, 0, 0),
    trajectory('L0', 3, 0, 1),
    runEvent('L1', 'L0', 2),
    trajectory('L1', 3, 0, 0),
    trajectory('L1', 3, 0, 1),
    iterationEvent('L1', 3),
    checkpointEvent('L1', 3),
  ];
}

const keys = (events: StarpoEvent[]) => events.map(eventKey);

test('after a crash and resume only the surviving lineage is replayed', () => {
  const dropped: string[] = [];
  const kept = replayEvents(crashAndResume(), (e, why) => dropped.push(`${why}:${eventKey(e)}`));
  assert.deepEqual(keys(kept), [
    'run-1/L0/0/run',
    'run-1/L0/1/trajectory/train/0/0',
    'run-1/L0/1/iteration',
    'run-1/L0/1/checkpoint',
    'run-1/L0/2/trajectory/train/0/0',
    'run-1/L0/2/iteration',
    'run-1/L0/2/checkpoint',
    'run-1/L1/2/run',
    'run-1/L1/3/trajectory/train/0/0',
    'run-1/L1/3/trajectory/train/0/1',
    'run-1/L1/3/iteration',
    'run-1/L1/3/checkpoint',
  ]);
  assert.deepEqual(dropped, [
    'superseded:run-1/L0/3/trajectory/train/0/0',
    'superseded:run-1/L0/3/trajectory/train/0/1',
  ]);
});

test('a duplicated event keeps its first copy', () => {
  const first = trajectory('L0', 1);
  const retry = { ...trajectory('L0', 1), trajectoryReturn: 9 };
  const reasons: DropReason[] = [];
  const kept = replayEvents([runEvent('L0'), first, retry, iterationEvent('L0', 1)], (_e, why) => reasons.push(why));
  assert.deepEqual(kept, [runEvent('L0'), first, iterationEvent('L0', 1)]);
  assert.deepEqual(reasons, ['duplicate']);
});

test('train and val trajectories with the same indices are different events', () => {
  const val = { ...trajectory('L0', 1), split: 'val' };
  assert.equal(replayEvents([trajectory('L0', 1), val]).length, 2);
});

test('a log without RunEvents is only deduplicated', () => {
  const events = [trajectory('A', 1), trajectory('B', 1), trajectory('A', 1)];
  assert.deepEqual(keys(replayEvents(events)), ['run-1/A/1/trajectory/train/0/0', 'run-1/B/1/trajectory/train/0/0']);
});

test('replay from a local log reader gives the same events as replay of the list', async () => {
  const root = mkdtempSync(join(tmpdir(), 'starpo-replay-'));
  const log = createLocalEventLog({ root });
  const events = crashAndResume();
  await log.append(events.slice(0, 9));
  await log.append([...events.slice(9), events[4]]); // a retried write of an old event
  await log.close();
  const replayed: StarpoEvent[] = [];
  for await (const e of replay(createLocalEventReader({ root }), 'run-1')) replayed.push(e);
  assert.deepEqual(replayed, replayEvents(events));
});
