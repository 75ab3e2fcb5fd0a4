/**
 * A fuzz pass over event-file bytes: every single-byte change of a segment or of the index is either
 * detected (CorruptDataError, or a problem reported) or reads back exactly the events appended. Logs
 * written before the index cannot promise that; for them every change must still end, promptly, in
 * events or a CorruptDataError (the bounded decoder), never another error.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CorruptDataError } from '../../../src/errors.ts';
import { createLocalEventLog } from '../../../src/events/local-log.ts';
import { createLocalEventReader } from '../../../src/events/local-reader.ts';
import type { StarpoEvent } from '../../../src/events/types.ts';
import { oneOfEach, trajectory } from './fixtures.ts';

type Outcome = { events: StarpoEvent[]; problems: number } | { error: unknown };

async function read(dir: string): Promise<Outcome> {
  const events: StarpoEvent[] = [];
  let problems = 0;
  try {
    const reader = createLocalEventReader({ root: dir });
    for await (const e of reader.read('run-1', { onProblem: () => problems++ })) events.push(e);
    return { events, problems };
  } catch (error) {
    return { error };
  }
}

/** Every byte but one in `stride` of the header's schema text (most of a pre-index log). */
const allBytes = (): boolean => true;
function sparseSchemaText(stride: number): (bytes: Buffer, i: number) => boolean {
  return (bytes, i) => {
    const schema = bytes.indexOf('{"type":"record"');
    const end = bytes.indexOf('avro.codec');
    return i < schema || i >= end || (i - schema) % stride === 0;
  };
}

/** Calls `check` with the outcome of reading the log after each single-byte change of each of its files. */
async function everyFlip(
  dir: string,
  pattern: number,
  check: (o: Outcome, where: string) => void,
  flipAt: (bytes: Buffer, i: number) => boolean = allBytes,
): Promise<number> {
  const folder = join(dir, 'run-1', 'events');
  let flips = 0;
  for (const name of readdirSync(folder)) {
    const path = join(folder, name);
    const original = readFileSync(path);
    for (let i = 0; i < original.length; i++) {
      if (!flipAt(original, i)) continue;
      const changed = Buffer.from(original);
      changed[i] = (changed[i] as number) ^ pattern;
      writeFileSync(path, changed);
      check(await read(dir), `${name}@${i}`);
      flips++;
    }
    writeFileSync(path, original);
  }
  return flips;
}

test('every single-byte flip of an indexed log is detected or reads back the identical events', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'starpo-fuzz-'));
  const appended = [...oneOfEach(), trajectory('L0', 2)];
  const log = createLocalEventLog({ root: dir });
  await log.append(appended.slice(0, 4));
  await log.append(appended.slice(4));
  await log.close();
  let detected = 0;
  const flips = await everyFlip(dir, 0xff, (o, where) => {
    if ('error' in o) assert.ok(o.error instanceof CorruptDataError, `${where}: ${String(o.error)}`);
    else if (o.problems === 0) assert.deepEqual(o.events, appended, `${where}: read back different events unnoticed`);
    detected += 'error' in o || o.problems > 0 ? 1 : 0;
  });
  assert.equal(detected, flips, 'with checksums every flip is detected');
});

test('every flip of a pre-index log (1 in 64 of its schema text) ends in events or a CorruptDataError', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'starpo-fuzz-legacy-'));
  cpSync(fileURLToPath(new URL('../../fixtures/events/legacy-log/', import.meta.url)), dir, { recursive: true });
  let errors = 0;
  await everyFlip(
    dir,
    0x80,
    (o, where) => {
      if ('error' in o) {
        assert.ok(o.error instanceof CorruptDataError, `${where}: ${String(o.error)}`);
        errors++;
      }
    },
    sparseSchemaText(64),
  );
  assert.ok(errors > 0);
});
