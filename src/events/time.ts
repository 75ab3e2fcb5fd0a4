/**
 * Avro timestamp-millis conversion. avsc has no built-in logical types, so the schemas declare
 * `{"type":"long","logicalType":"timestamp-millis"}` (standard Avro, readable as timestamps by other
 * languages) and starpo converts explicitly at the codec boundary: Date in the domain, long on the wire.
 */
import { StarpoError } from '../errors.ts';

/** Milliseconds since the Unix epoch for a Date; refuses an invalid Date instead of writing NaN. */
export function toTimestampMillis(date: Date): number {
  const ms = date.getTime();
  if (!Number.isSafeInteger(ms)) {
    throw new StarpoError(`timestamp ${String(date)} is not a valid date`, { details: { value: String(date) } });
  }
  return ms;
}

/** The Date for a timestamp-millis long (avsc decodes Avro longs to JS numbers). */
export function fromTimestampMillis(ms: number): Date {
  if (!Number.isSafeInteger(ms)) {
    throw new StarpoError(`timestamp-millis ${ms} is not a safe integer`, { details: { value: ms } });
  }
  return new Date(ms);
}
