import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkEncoded, TruncatedDataError } from '../../../src/events/avro-bounds.ts';
import { encodeBlock, encodeHeader } from '../../../src/events/avro-container.ts';
import { encodeEvent } from '../../../src/events/codec.ts';
import { schemaRegistry } from '../../../src/events/schemas.ts';
import { CorruptDataError } from '../../../src/errors.ts';
import { oneOfEach, trajectory } from './fixtures.ts';

const TYPE = schemaRegistry().current.type;
/** Zig-zag varint of 2^31 − 1. */
const HUGE_COUNT = Buffer.from([0xfe, 0xff, 0xff, 0xff, 0x0f]);

/** A trajectory record whose `turns` array claims 2^31 − 1 items (the count sits where an empty array's 0 is). */
function hugeTurnsRecord(): Buffer {
  const empty = encodeEvent({ ...trajectory('L0', 1), turns: [] });
  const one = encodeEvent({ ...trajectory('L0', 1), turns: [trajectory('L0', 1).turns[0]!] });
  let at = 0;
  while (empty[at] === one[at]) at++;
  return Buffer.concat([empty.subarray(0, at), HUGE_COUNT, empty.subarray(at + 1)]);
}

test('every event of each kind checks out to exactly its encoded length', () => {
  for (const e of oneOfEach()) {
    const bytes = encodeEvent(e);
    assert.equal(checkEncoded(TYPE, bytes, 0), bytes.length);
  }
});

test('an array count larger than the bytes that remain is refused before anything is read', () => {
  assert.throws(() => checkEncoded(TYPE, hugeTurnsRecord(), 0),
    (err: unknown) => err instanceof TruncatedDataError && /^2147483647 array items at byte \d+ need/.test(err.message));
});

test('a string longer than the data, a negative length and a union branch out of range are refused', () => {
  assert.throws(() => checkEncoded(TYPE, Buffer.from([0x02, 0x7e, 0x61]), 0), TruncatedDataError); // runId of 63 bytes
  assert.throws(() => checkEncoded(TYPE, Buffer.from([0x02, 0x01]), 0), /negative string length -1 at byte 1/);
  assert.throws(() => checkEncoded(TYPE, Buffer.from([0x14]), 0), /union branch 10 of 5 at byte 0/);
  assert.throws(() => checkEncoded(TYPE, Buffer.from([...Array<number>(10).fill(0xff), 0x01]), 0),
    (err: unknown) => err instanceof CorruptDataError && /longer than 10 bytes/.test(err.message));
});

test('reading a block whose record claims 2^31 − 1 array items fails promptly with one line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'starpo-bounds-'));
  const events = join(dir, 'r', 'events');
  mkdirSync(events, { recursive: true });
  const sync = randomBytes(16);
  const header = encodeHeader(JSON.stringify(schemaRegistry().current.json), sync); // the pre-index format
  writeFileSync(join(events, '00000001.avro'), Buffer.concat([header, encodeBlock([hugeTurnsRecord()], sync)]));
  const reader = fileURLToPath(new URL('../../../src/events/local-reader.ts', import.meta.url));
  const script = `import { createLocalEventReader } from ${JSON.stringify(reader)};\n` +
    `const events = createLocalEventReader({ root: ${JSON.stringify(dir)} }).read('r', { onProblem: () => {} });\n` +
    'try { for await (const e of events) {} }\n' +
    'catch (err) { console.log(err.name, err.message.split("\\n").length); }\n';
  writeFileSync(join(dir, 'read.mts'), script);
  // A child process with a deadline: a reader that trusted the count would spin far past it.
  const args = ['--import', 'tsx', join(dir, 'read.mts')];
  const run = spawnSync(process.execPath, args, { encoding: 'utf8', timeout: 60_000 });
  assert.equal(run.signal, null, 'the read finished');
  assert.equal(run.stdout.trim(), 'CorruptDataError 1');
});
