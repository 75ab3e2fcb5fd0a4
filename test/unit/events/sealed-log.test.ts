/**
 * Sealed segments (a durable run's events beside its checkpoints): read back in log order event for event,
 * written again to the same bytes, and every kind of damage the local log detects detected here too.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { createArtifactStore } from '../../../src/storage/artifacts.ts';
import { CorruptDataError } from '../../../src/errors.ts';
import {
  createSealedEventReader,
  encodeSealedSegment,
  sealedName,
  sealSegment,
} from '../../../src/events/sealed-log.ts';
import type { ReadProblem, StarpoEvent } from '../../../src/events/types.ts';
import { checkpointEvent, iterationEvent, runEvent, trajectory } from './fixtures.ts';

const scratch = mkdtempSync(join(tmpdir(), 'starpo-sealed-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
let stores = 0;

function iteration(lineage: string, i: number): StarpoEvent[] {
  return [
    trajectory(lineage, i, 0, 0),
    trajectory(lineage, i, 0, 1),
    iterationEvent(lineage, i),
    checkpointEvent(lineage, i),
  ];
}

/** run-1: main (iterations 1, 2), then a resume r1 from 1 (iteration 2), sealed out of order. */
async function sealedRun() {
  const root = join(scratch, String(stores++));
  const store = createArtifactStore(`file://${root}`);
  const segments: [bigint, string, number, StarpoEvent[]][] = [
    [40n, 'r1', 2, [runEvent('r1', 'main', 1), ...iteration('r1', 2)]],
    [0n, 'main', 1, [runEvent('main'), ...iteration('main', 1)]],
    [9n, 'main', 2, iteration('main', 2)],
  ];
  for (const [order, lineage, i, events] of segments) {
    assert.equal(await sealSegment(store, 'run-1', sealedName(order, lineage, i), events), 'sealed');
  }
  const logOrder = [segments[1]![3], segments[2]![3], segments[0]![3]].flat();
  return { root, store, dir: join(root, 'run-1', 'events'), logOrder };
}

/** Read through a store of its own: the writer's caches what it wrote, and these tests change the files under it. */
async function readAll(root: string, allowPartial = false) {
  const store = createArtifactStore(`file://${root}`);
  const problems: ReadProblem[] = [];
  const events: StarpoEvent[] = [];
  for await (const e of createSealedEventReader(store).read('run-1', {
    allowPartial,
    onProblem: (p) => problems.push(p),
  }))
    events.push(e);
  return { events, problems };
}

test('sealed segments read back in log order, event for event; sealing again writes nothing', async () => {
  const { root, store, logOrder } = await sealedRun();
  const { events, problems } = await readAll(root);
  assert.deepEqual(events, logOrder);
  assert.deepEqual(problems, []);
  assert.equal(await sealSegment(store, 'run-1', sealedName(9n, 'main', 2), []), 'present');
  assert.deepEqual((await readAll(root)).events, logOrder);
});

test('a segment is a function of its name and events: the same bytes every time, another name other bytes', () => {
  const events = iteration('main', 3);
  const a = encodeSealedSegment('run-1', sealedName(7n, 'main', 3), events);
  assert.deepEqual(encodeSealedSegment('run-1', sealedName(7n, 'main', 3), events), a);
  assert.notDeepEqual(encodeSealedSegment('run-1', sealedName(8n, 'main', 3), events).segment, a.segment);
  assert.equal(a.index.split('\n').length, 3, 'a header line and one block line');
});

test('a segment whose index was never written is a note and is not read', async () => {
  const { root, dir, logOrder } = await sealedRun();
  writeFileSync(join(dir, `${sealedName(99n, 'r1', 3)}.avro`), Buffer.from('cut short'));
  const { events, problems } = await readAll(root);
  assert.deepEqual(events, logOrder);
  assert.deepEqual(
    problems.map((p) => p.kind),
    ['torn-tail'],
  );
});

test('a changed byte, a missing segment or a damaged index is damage; allowPartial reads the segments before it', async () => {
  const damage: [string, (dir: string, name: string) => void, string][] = [
    ['checksum-mismatch', (dir, name) => flipLastByte(join(dir, `${name}.avro`)), 'a block of 4 events fails'],
    ['missing-segment', (dir, name) => unlinkSync(join(dir, `${name}.avro`)), 'the object is gone'],
    ['damaged-index', (dir, name) => flipLastByte(join(dir, `${name}.index`)), 'line 2'],
  ];
  for (const [kind, spoil, message] of damage) {
    const { root, dir, logOrder } = await sealedRun();
    spoil(dir, sealedName(9n, 'main', 2));
    await assert.rejects(
      readAll(root),
      (e: CorruptDataError) => e.message.includes(kind) && e.message.includes(message),
    );
    const { events, problems } = await readAll(root, true);
    assert.deepEqual(events, logOrder.slice(0, 5), kind);
    assert.deepEqual(
      problems.map((p) => p.kind),
      [kind],
    );
  }
});

function flipLastByte(path: string): void {
  const bytes = readFileSync(path);
  bytes[bytes.length - 2] ^= 0x01;
  writeFileSync(path, bytes);
}
