import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createReadStream, mkdtempSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import avro from 'avsc';
import { createLocalEventLog } from '../../../src/events/local-log.ts';
import { createLocalEventReader } from '../../../src/events/local-reader.ts';
import { encodeBlock, encodeHeader } from '../../../src/events/avro-container.ts';
import { encodeEvent } from '../../../src/events/codec.ts';
import { loadSchemaVersion, SCHEMA_DIR } from '../../../src/events/schemas.ts';
import type { ReadProblem, StarpoEvent } from '../../../src/events/types.ts';
import { iterationEvent, oneOfEach, trajectory } from './fixtures.ts';

const root = () => mkdtempSync(join(tmpdir(), 'starpo-events-'));

async function readAll(dir: string, runId = 'run-1'): Promise<{ events: StarpoEvent[]; problems: ReadProblem[] }> {
  const problems: ReadProblem[] = [];
  const events: StarpoEvent[] = [];
  const reader = createLocalEventReader({ root: dir });
  for await (const e of reader.read(runId, { onProblem: (p) => problems.push(p) })) events.push(e);
  return { events, problems };
}

async function write(dir: string, ...batches: StarpoEvent[][]): Promise<void> {
  const log = createLocalEventLog({ root: dir });
  for (const batch of batches) await log.append(batch);
  await log.close();
}

function encodeBlockSize(event: StarpoEvent): number {
  return encodeBlock([encodeEvent(event)], Buffer.alloc(16)).length;
}

const segment = (dir: string, n = 1) => join(dir, 'run-1', 'events', `${String(n).padStart(8, '0')}.avro`);

test('appended batches read back in order, one segment per writer', async () => {
  const dir = root();
  await write(dir, oneOfEach(), [trajectory('L0', 2)]);
  await write(dir, [iterationEvent('L0', 2)]);
  assert.deepEqual(readdirSync(join(dir, 'run-1', 'events')), ['00000001.avro', '00000002.avro']);
  const { events, problems } = await readAll(dir);
  assert.deepEqual(events, [...oneOfEach(), trajectory('L0', 2), iterationEvent('L0', 2)]);
  assert.deepEqual(problems, []);
});

test('events of two runs go to their own folders', async () => {
  const dir = root();
  await write(dir, [trajectory('L0', 1, 0, 0, 'run-a'), trajectory('L0', 1, 0, 0, 'run-b')]);
  assert.deepEqual((await readAll(dir, 'run-b')).events, [trajectory('L0', 1, 0, 0, 'run-b')]);
  assert.deepEqual((await readAll(dir, 'nothing-here')).events, []);
});

test('a torn tail keeps every complete block before it and is reported with its offset', async () => {
  const dir = root();
  await write(dir, [trajectory('L0', 1)], [trajectory('L0', 2)]);
  const firstTwo = statSync(segment(dir)).size;
  await write(dir, [trajectory('L0', 3)]); // a later segment, written after the "crash", is still read
  const path = segment(dir);
  const blockTwo = firstTwo - encodeBlockSize(trajectory('L0', 2));
  truncateSync(path, firstTwo - 7);
  const { events, problems } = await readAll(dir);
  assert.deepEqual(events, [trajectory('L0', 1), trajectory('L0', 3)]);
  assert.equal(problems.length, 1);
  assert.equal(problems[0].kind, 'torn-tail');
  assert.equal(problems[0].file, path);
  assert.equal(problems[0].byteOffset, blockTwo);
});

test('zeros left at the end of a file by a crash are a torn tail', async () => {
  const dir = root();
  await write(dir, [trajectory('L0', 1)]);
  writeFileSync(segment(dir), Buffer.alloc(9), { flag: 'a' });
  const { events, problems } = await readAll(dir);
  assert.deepEqual(events, [trajectory('L0', 1)]);
  assert.deepEqual(problems.map((p) => p.kind), ['torn-tail']);
});

test('a damaged block followed by more data is reported as corrupt and the rest of the file skipped', async () => {
  const dir = root();
  await write(dir, [trajectory('L0', 1)], [trajectory('L0', 2)], [trajectory('L0', 3)]);
  const bytes = readFileSync(segment(dir));
  const secondSync = bytes.length - encodeBlockSize(trajectory('L0', 3)) - 1; // last byte of block two's sync marker
  bytes[secondSync] ^= 0xff;
  writeFileSync(segment(dir), bytes);
  const { events, problems } = await readAll(dir);
  assert.deepEqual(events, [trajectory('L0', 1)]);
  assert.deepEqual(problems.map((p) => p.kind), ['corrupt-block']);
});

test('a file written with the v1 schema reads back with v2 defaults', async () => {
  const dir = root();
  const v1 = loadSchemaVersion(join(SCHEMA_DIR, 'history', 'v1'), 1);
  const sync = randomBytes(16);
  const event = trajectory('L0', 1);
  await write(dir, [iterationEvent('L0', 1)]); // creates the folder; the v1 file becomes segment 2
  writeFileSync(segment(dir, 2), Buffer.concat([encodeHeader(JSON.stringify(v1.json), sync),
    encodeBlock([encodeEvent({ ...event, split: 'val' }, v1)], sync)]));
  assert.deepEqual((await readAll(dir)).events, [iterationEvent('L0', 1), { ...event, split: 'train', tokenIds: [], tokenRoles: '' }]);
});

test('the segments are standard Avro container files that avsc itself decodes', async () => {
  const dir = root();
  await write(dir, oneOfEach());
  const records: unknown[] = [];
  await new Promise((resolve, reject) => {
    createReadStream(segment(dir)).pipe(new avro.streams.BlockDecoder())
      .on('data', (r: unknown) => records.push(r)).on('end', resolve).on('error', reject);
  });
  assert.equal(records.length, oneOfEach().length);
});
