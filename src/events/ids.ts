/**
 * Run and lineage ids end up in file paths, S3 keys, Kafka keys and event keys joined by '/', so they
 * are restricted to a portable, separator-free alphabet and checked at every boundary that uses them.
 */
import { StarpoError } from '../errors.ts';

const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** Throws (non-retryable) unless `value` is a safe id: letters, digits, '.', '_', '-', at most 128 chars. */
export function assertSafeId(field: string, value: string): void {
  if (!ID_PATTERN.test(value)) {
    throw new StarpoError(`${field} ${JSON.stringify(value)} is not a valid id (letters, digits, . _ -; max 128)`, {
      details: { field, value },
    });
  }
}

/** Throws unless `value` is a non-negative integer iteration number. */
export function assertIteration(value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new StarpoError(`iteration ${value} is not a non-negative integer`, { details: { value } });
  }
}
