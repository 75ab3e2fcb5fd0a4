import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createReadStream, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import avro from 'avsc';
import { createLocalEventLog } from '../../../src/events/local-log.ts';
import { createLocalEventReader } from '../../../src/events/local-reader.ts';
import { encodeBlock, encodeHeader } from '../../../src/events/avro-container.ts';
import { encodeEvent } from '../../../src/events/codec.ts';
import { loadSchemaVersion, SCHEMA_DIR } from '../../../src/events/schemas.ts';
import type { ReadProblem, StarpoEvent } from '../../../src/events/types.ts';
import { CorruptDataError } from '../../../src/errors.ts';
import { iterationEvent, oneOfEach, trajectory } from './fixtures.ts';

const root = () => mkdtempSync(join(tmpdir(), 'starpo-events-'));
/** Two segments written by the local log before it had an index (commit 8acec68), see its README. */
const LEGACY_LOG = fileURLToPath(new URL('../../fixtures/events/legacy-log/', import.meta.url));

async function readAll(
  dir: string,
  runId = 'run-1',
  allowPartial = false,
): Promise<{ events: StarpoEvent[]; problems: ReadProblem[] }> {
  const problems: ReadProblem[] = [];
  const events: StarpoEvent[] = [];
  const reader = createLocalEventReader({ root: dir });
  for await (const e of reader.read(runId, { onProblem: (p) => problems.push(p), allowPartial })) events.push(e);
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
  assert.deepEqual(readdirSync(join(dir, 'run-1', 'events')), ['00000001.avro', '00000002.avro', 'segments.index']);
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

test('a block a crash cut before it was indexed is a torn tail: every acknowledged block is kept', async () => {
  const dir = root();
  await write(dir, [trajectory('L0', 1)]);
  const acknowledged = statSync(segment(dir)).size;
  await write(dir, [trajectory('L0', 3)]); // a later segment, written after the "crash", is still read
  const cut = encodeBlock([encodeEvent(trajectory('L0', 2))], Buffer.alloc(16)).subarray(0, 40);
  writeFileSync(segment(dir), cut, { flag: 'a' });
  const { events, problems } = await readAll(dir);
  assert.deepEqual(events, [trajectory('L0', 1), trajectory('L0', 3)]);
  assert.deepEqual(
    problems.map((p) => [p.kind, p.file, p.byteOffset]),
    [['torn-tail', segment(dir), acknowledged]],
  );
});

test('zeros left at the end of a file by a crash are a torn tail', async () => {
  const dir = root();
  await write(dir, [trajectory('L0', 1)]);
  writeFileSync(segment(dir), Buffer.alloc(9), { flag: 'a' });
  const { events, problems } = await readAll(dir);
  assert.deepEqual(events, [trajectory('L0', 1)]);
  assert.deepEqual(
    problems.map((p) => p.kind),
    ['torn-tail'],
  );
});

test('a flipped byte in a block fails the read, naming the segment, the offset and the events lost', async () => {
  const dir = root();
  await write(dir, [trajectory('L0', 1)], [trajectory('L0', 2)], [trajectory('L0', 3)]);
  const bytes = readFileSync(segment(dir));
  const blockThree = bytes.length - encodeBlockSize(trajectory('L0', 3));
  bytes[blockThree - 1] ^= 0xff; // last byte of block two's sync marker
  writeFileSync(segment(dir), bytes);
  const blockTwo = blockThree - encodeBlockSize(trajectory('L0', 2));
  await assert.rejects(
    readAll(dir),
    (err: Error) =>
      err instanceof CorruptDataError &&
      err.message ===
        `event log damaged (checksum-mismatch) at ${segment(dir)}@${blockTwo}: ` +
          'a block of 1 events fails its checksum; 2 acknowledged events from there on are lost ' +
          '(replay and report read the intact prefix with --allow-partial)',
  );
});

test('with allowPartial a damaged log gives its intact prefix and reports the damage', async () => {
  const dir = root();
  await write(dir, [trajectory('L0', 1)], [trajectory('L0', 2)], [trajectory('L0', 3)]);
  const bytes = readFileSync(segment(dir));
  bytes[bytes.length - 5] ^= 0x01;
  writeFileSync(segment(dir), bytes);
  const { events, problems } = await readAll(dir, 'run-1', true);
  assert.deepEqual(events, [trajectory('L0', 1), trajectory('L0', 2)]);
  assert.deepEqual(
    problems.map((p) => [p.kind, p.eventsLost]),
    [['checksum-mismatch', 1]],
  );
});

test('a log from before the segment index (no checksums, no index) reads, noted as not tamper-evident', async () => {
  const { events, problems } = await readAll(LEGACY_LOG);
  // Written under schema v4: iteration events read back without an env-spec id or collapse probe (v5 defaults).
  const asV4 = (e: StarpoEvent): StarpoEvent => (e.kind === 'iteration' ? { ...e, envSpecId: '', collapse: null } : e);
  const written = [...oneOfEach(), trajectory('L0', 2), iterationEvent('L0', 2), trajectory('L0', 3)];
  assert.deepEqual(events, written.map(asV4));
  const first = join(LEGACY_LOG, 'run-1', 'events', '00000001.avro');
  assert.deepEqual(
    problems.map((p) => [p.kind, p.file]),
    [['unverified', first]],
  );
});

test('a file written with the v1 schema (before the index) reads back with v2 defaults', async () => {
  const dir = root();
  const v1 = loadSchemaVersion(join(SCHEMA_DIR, 'history', 'v1'), 1);
  const sync = randomBytes(16);
  const event = trajectory('L0', 1);
  mkdirSync(join(dir, 'run-1', 'events'), { recursive: true });
  writeFileSync(
    segment(dir, 1),
    Buffer.concat([
      encodeHeader(JSON.stringify(v1.json), sync),
      encodeBlock([encodeEvent({ ...event, split: 'val' }, v1)], sync),
    ]),
  );
  assert.deepEqual((await readAll(dir)).events, [{ ...event, split: 'train', tokenIds: [], tokenRoles: '' }]);
});

test('the segments are standard Avro container files that avsc itself decodes', async () => {
  const dir = root();
  await write(dir, oneOfEach());
  const records: unknown[] = [];
  await new Promise((resolve, reject) => {
    createReadStream(segment(dir))
      .pipe(new avro.streams.BlockDecoder())
      .on('data', (r: unknown) => records.push(r))
      .on('end', resolve)
      .on('error', reject);
  });
  assert.equal(records.length, oneOfEach().length);
});
