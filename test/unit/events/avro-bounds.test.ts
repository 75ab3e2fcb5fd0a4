import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkEncoded, TruncatedDataError } from '../../../src/events/avro-bounds.ts';
import { encodeEvent } from '../../../src/events/codec.ts';
import { schemaRegistry } from '../../../src/events/schemas.ts';
import { CorruptDataError } from '../../../src/errors.ts';
import { hugeTurnsRecord, oneOfEach } from './fixtures.ts';

const TYPE = schemaRegistry().current.type;
test('every event of each kind checks out to exactly its encoded length', () => {
  for (const e of oneOfEach()) {
    const bytes = encodeEvent(e);
    assert.equal(checkEncoded(TYPE, bytes, 0), bytes.length);
  }
});

test('an array count larger than the bytes that remain is refused before anything is read', () => {
  assert.throws(
    () => checkEncoded(TYPE, hugeTurnsRecord(), 0),
    (err: unknown) => err instanceof TruncatedDataError && /^2147483647 array items at byte \d+ need/.test(err.message),
  );
});

test('a string longer than the data, a negative length and a union branch out of range are refused', () => {
  assert.throws(() => checkEncoded(TYPE, Buffer.from([0x02, 0x7e, 0x61]), 0), TruncatedDataError); // runId of 63 bytes
  assert.throws(() => checkEncoded(TYPE, Buffer.from([0x02, 0x01]), 0), /negative string length -1 at byte 1/);
  assert.throws(() => checkEncoded(TYPE, Buffer.from([0x14]), 0), /union branch 10 of 5 at byte 0/);
  assert.throws(
    () => checkEncoded(TYPE, Buffer.from([...Array<number>(10).fill(0xff), 0x01]), 0),
    (err: unknown) => err instanceof CorruptDataError && /longer than 10 bytes/.test(err.message),
  );
});
