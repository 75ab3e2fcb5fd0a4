import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fromTimestampMillis, toTimestampMillis } from '../../../src/events/time.ts';

test('a date converts to epoch milliseconds and back', () => {
  const date = new Date('2025-06-01T12:00:00.123Z');
  assert.equal(toTimestampMillis(date), 1748779200123);
  assert.deepEqual(fromTimestampMillis(1748779200123), date);
});

test('an invalid date is refused instead of being written as NaN', () => {
  assert.throws(() => toTimestampMillis(new Date('not a date')), /not a valid date/);
  assert.throws(() => fromTimestampMillis(1.5), /not a safe integer/);
});
