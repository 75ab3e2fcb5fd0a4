/**
 * The local log is tamper-evident: whatever happens to a segment or the index after an append resolved,
 * a reader either returns exactly the events appended or says what is damaged, where, and how many
 * acknowledged events are lost; with allowPartial it returns the intact prefix.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CorruptDataError } from '../../../src/errors.ts';
import { createLocalEventLog } from '../../../src/events/local-log.ts';
import { createLocalEventReader } from '../../../src/events/local-reader.ts';
import { replay } from '../../../src/events/replay.ts';
import { encodeBlock, encodeHeader } from '../../../src/events/avro-container.ts';
import { schemaRegistry } from '../../../src/events/schemas.ts';
import type { ReadProblem, StarpoEvent } from '../../../src/events/types.ts';
import { hugeTurnsRecord, iterationEvent, runEvent, trajectory } from './fixtures.ts';

const root = () => mkdtempSync(join(tmpdir(), 'starpo-integrity-'));
const eventsOf = (dir: string) => join(dir, 'run-1', 'events');
/** The run's segment index (written as one SHA-256-checked line per durable range). */
const INDEX_FILE = 'segments.index';
const segment = (dir: string, n: number) => join(eventsOf(dir), `${String(n).padStart(8, '0')}.avro`);

/** Three writers, three segments: 2 + 1 + 2 events. */
async function threeSegments(dir: string): Promise<StarpoEvent[][]> {
  const batches = [
    [runEvent('L0'), trajectory('L0', 1)],
    [iterationEvent('L0', 1)],
    [trajectory('L0', 2), iterationEvent('L0', 2)],
  ];
  for (const batch of batches) {
    const log = createLocalEventLog({ root: dir });
    await log.append(batch);
    await log.close();
  }
  return batches;
}

async function readAll(dir: string, allowPartial = false): Promise<{ events: StarpoEvent[]; problems: ReadProblem[] }> {
  const events: StarpoEvent[] = [];
  const problems: ReadProblem[] = [];
  const reader = createLocalEventReader({ root: dir });
  for await (const e of reader.read('run-1', { onProblem: (p) => problems.push(p), allowPartial })) events.push(e);
  return { events, problems };
}

/** The damage a plain read fails with, as [kind, file, byteOffset, eventsLost]. */
async function damage(dir: string): Promise<unknown[]> {
  const err = await readAll(dir).then(
    () => assert.fail('the read should fail'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof CorruptDataError, String(err));
  const d = err.details as unknown as ReadProblem;
  return [d.kind, d.file, d.byteOffset, d.eventsLost];
}

test('a missing newest segment is damage, with its events counted as lost', async () => {
  const dir = root();
  await threeSegments(dir);
  rmSync(segment(dir, 3));
  assert.deepEqual(await damage(dir), ['missing-segment', segment(dir, 3), 0, 2]);
});

test('an emptied segment is damage; with allowPartial the segments before it are read', async () => {
  const dir = root();
  const batches = await threeSegments(dir);
  truncateSync(segment(dir, 2), 0);
  assert.deepEqual(await damage(dir), ['empty-segment', segment(dir, 2), 0, 3]);
  const { events, problems } = await readAll(dir, true);
  assert.deepEqual(events, batches[0]);
  assert.deepEqual(
    problems.map((p) => p.kind),
    ['empty-segment'],
  );
});

test('a truncated segment is damage at the block it cuts', async () => {
  const dir = root();
  await threeSegments(dir);
  const size = readFileSync(segment(dir, 1)).length;
  truncateSync(segment(dir, 1), size - 30);
  const [kind, file, byteOffset, lost] = await damage(dir);
  assert.deepEqual([kind, file, lost], ['truncated-segment', segment(dir, 1), 5]);
  assert.ok((byteOffset as number) > 0 && (byteOffset as number) < size - 30);
});

test('two segments swapped by name are reported as reordered', async () => {
  const dir = root();
  await threeSegments(dir);
  renameSync(segment(dir, 1), join(dir, 'tmp.avro'));
  renameSync(segment(dir, 2), segment(dir, 1));
  renameSync(join(dir, 'tmp.avro'), segment(dir, 2));
  assert.deepEqual(await damage(dir), ['reordered-segment', segment(dir, 1), 0, 5]);
});

test('deleting the newest segment cannot make replay show the superseded lineage', async () => {
  const dir = root();
  const log = createLocalEventLog({ root: dir });
  await log.append([runEvent('L0'), trajectory('L0', 1), iterationEvent('L0', 1), trajectory('L0', 2)]);
  await log.close();
  const resumed = createLocalEventLog({ root: dir });
  await resumed.append([runEvent('r1', 'L0', 1), trajectory('r1', 2), iterationEvent('r1', 2)]);
  await resumed.close();
  rmSync(segment(dir, 2));
  const read = async () => {
    for await (const _ of replay(createLocalEventReader({ root: dir }), 'run-1')) void _;
  };
  await assert.rejects(read(), /missing-segment.*00000002\.avro@0: .*3 acknowledged events/);
});

test('a changed byte in the index is damage; a deleted index is damage too', async () => {
  const dir = root();
  await threeSegments(dir);
  const index = readFileSync(join(eventsOf(dir), INDEX_FILE));
  index[index.indexOf('"n":1') + 4] = '2'.charCodeAt(0);
  writeFileSync(join(eventsOf(dir), INDEX_FILE), index);
  assert.equal((await damage(dir))[0], 'damaged-index');
  rmSync(join(eventsOf(dir), INDEX_FILE));
  assert.deepEqual(await damage(dir), ['missing-index', segment(dir, 1), 0, undefined]);
});

test('an index line a crash cut short is a note, and the next writer appends after removing it', async () => {
  const dir = root();
  const batches = await threeSegments(dir);
  writeFileSync(join(eventsOf(dir), INDEX_FILE), '0123456789abcdef {"seg":4,"at"', { flag: 'a' });
  assert.deepEqual(
    (await readAll(dir)).problems.map((p) => p.kind),
    ['torn-tail'],
  );
  const log = createLocalEventLog({ root: dir });
  await log.append([trajectory('L0', 3)]);
  await log.close();
  assert.deepEqual(await readAll(dir), { events: [...batches.flat(), trajectory('L0', 3)], problems: [] });
});

test('a writer never reuses the number of an indexed segment whose file is gone', async () => {
  const dir = root();
  await threeSegments(dir);
  rmSync(segment(dir, 3));
  const log = createLocalEventLog({ root: dir });
  await log.append([trajectory('L0', 3)]);
  await log.close();
  assert.deepEqual(await damage(dir), ['missing-segment', segment(dir, 3), 0, 3]);
});

test('reading a block whose record claims 2^31 − 1 array items fails promptly with one line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'starpo-bounds-'));
  mkdirSync(eventsOf(dir), { recursive: true });
  const sync = randomBytes(16);
  const header = encodeHeader(JSON.stringify(schemaRegistry().current.json), sync); // the pre-index format
  writeFileSync(segment(dir, 1), Buffer.concat([header, encodeBlock([hugeTurnsRecord()], sync)]));
  const reader = fileURLToPath(new URL('../../../src/events/local-reader.ts', import.meta.url));
  const script =
    `import { createLocalEventReader } from ${JSON.stringify(reader)};\n` +
    `const reader = createLocalEventReader({ root: ${JSON.stringify(dir)} });\n` +
    "const events = reader.read('run-1', { onProblem: () => {} });\n" +
    'try { for await (const e of events) {} }\n' +
    'catch (err) { console.log(err.name, err.message.split("\\n").length); }\n';
  writeFileSync(join(dir, 'read.mts'), script);
  // A child process with a deadline: a reader that trusted the count would spin far past it.
  const args = ['--import', 'tsx', join(dir, 'read.mts')];
  const run = spawnSync(process.execPath, args, { encoding: 'utf8', timeout: 60_000 });
  assert.equal(run.signal, null, 'the read finished');
  assert.equal(run.stdout.trim(), 'CorruptDataError 1');
});

test('an index line claiming a block larger than its file is damage, read without allocating it', async () => {
  const dir = root();
  await threeSegments(dir);
  const path = join(eventsOf(dir), INDEX_FILE);
  const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
  const last = JSON.parse(lines.at(-1)!.slice(17)) as { seg: number; at: number; len: number };
  const json = JSON.stringify({ ...last, len: 2 ** 40 });
  lines[lines.length - 1] = `${createHash('sha256').update(json).digest('hex').slice(0, 16)} ${json}`;
  writeFileSync(path, `${lines.join('\n')}\n`);
  assert.deepEqual(await damage(dir), ['truncated-segment', segment(dir, 3), last.at, 2]);
});

test('bytes after the last indexed block: a crash leftover is a note, anything else a warning; all events read', async () => {
  const dir = root();
  const batches = await threeSegments(dir);
  const last = readFileSync(join(eventsOf(dir), INDEX_FILE), 'utf8')
    .trim()
    .split('\n')
    .at(-1)!;
  const { at, len } = JSON.parse(last.slice(last.indexOf(' ') + 1)) as { at: number; len: number };
  const block = readFileSync(segment(dir, 3)).subarray(at, at + len); // as a crash would leave it, sync marker and all
  const pristine = readFileSync(segment(dir, 3));
  const cases: [string, Buffer, string, RegExp][] = [
    ['a cut append', block.subarray(0, len >> 1), 'torn-tail', /a crash cut short/],
    ['a whole unindexed append', block, 'torn-tail', /before its index line/],
    ['a line of text', Buffer.from('appended by hand\n'), 'foreign-bytes', /not an append of this log/],
    ['zeros', Buffer.alloc(64), 'torn-tail', /zeros a crash left/],
    ['zeros after text', Buffer.concat([Buffer.from('x'), Buffer.alloc(64)]), 'foreign-bytes', /not an append/],
    ['an append and more', Buffer.concat([block, Buffer.from('x')]), 'foreign-bytes', /not an append/],
  ];
  for (const [what, tail, kind, message] of cases) {
    writeFileSync(segment(dir, 3), Buffer.concat([pristine, tail]));
    const { events, problems } = await readAll(dir);
    assert.deepEqual(events, batches.flat(), what);
    assert.deepEqual(
      problems.map((p) => [p.kind, p.byteOffset]),
      [[kind, pristine.length]],
      what,
    );
    assert.match(problems[0]!.message, new RegExp(`^${tail.length} bytes after the last indexed block: `), what);
    assert.match(problems[0]!.message, message, what);
  }
});
