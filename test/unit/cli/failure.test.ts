import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { CommanderError } from 'commander';
import { describeFailure, reportFailure, UsageError } from '../../../src/cli/failure.ts';
import { ConfigError, StarpoError } from '../../../src/errors.ts';

const systemError = (code: string, syscall: string, path: string) =>
  Object.assign(new Error(`${code}: ${syscall} '${path}'`), { code, syscall, path });

test('a starpo error is one line "what — why", exit 1', () => {
  assert.deepEqual(describeFailure(new ConfigError('seed', 'must be an integer in [0, 4294967295], got 1e+30')), {
    line: 'config seed — must be an integer in [0, 4294967295], got 1e+30',
    exitCode: 1,
  });
  assert.deepEqual(describeFailure(new StarpoError('run x not found: a\nb')), {
    line: 'run x not found — a; b',
    exitCode: 1,
  });
});

test('file-system errors name the operation and the path, and say what to do', async () => {
  const missing = await readFile('/nonexistent/starpo.json').catch((e: unknown) => e);
  assert.equal(describeFailure(missing).line, 'cannot open /nonexistent/starpo.json — it does not exist (ENOENT)');
  assert.equal(
    describeFailure(systemError('ENOSPC', 'write', '/r/x/events/00000002.avro')).line,
    'cannot write /r/x/events/00000002.avro — no space left on the device; free some, then continue the run with ' +
      '`starpo train --resume <run-dir>` (ENOSPC)',
  );
  assert.equal(
    describeFailure(systemError('EROFS', 'mkdir', '/ro/runs/x')).line,
    'cannot create the directory /ro/runs/x — the file system is read-only; choose a writable directory (e.g. ' +
      '--runs-dir) (EROFS)',
  );
  const wrapped = new Error('save failed', { cause: systemError('EACCES', 'open', '/r/x/config.json') });
  assert.match(describeFailure(wrapped).line, /^cannot open \/r\/x\/config.json — permission denied; /);
});

test("usage errors exit 2 and point at the command's help", () => {
  const commander = new CommanderError(1, 'commander.unknownOption', "error: unknown option '--nosuch'");
  assert.deepEqual(describeFailure(commander, 'starpo train'), {
    line: "unknown option '--nosuch' — see `starpo train --help`",
    exitCode: 2,
  });
  assert.equal(describeFailure(new UsageError("unknown command 'x'")).exitCode, 2);
});

test('anything else is reported as a bug, with its stack only under STARPO_DEBUG=1', () => {
  const err = new TypeError("Cannot read properties of undefined (reading 'close')");
  assert.equal(
    describeFailure(err).line,
    "internal error: Cannot read properties of undefined (reading 'close') — " +
      'a bug in starpo; rerun with STARPO_DEBUG=1 for the stack and report it',
  );
  const out: string[] = [];
  process.env.STARPO_DEBUG = '1';
  try {
    assert.equal(
      reportFailure(err, 'starpo', (s) => out.push(s)),
      1,
    );
  } finally {
    delete process.env.STARPO_DEBUG;
  }
  assert.match(out[0], /^TypeError: Cannot read properties[^\n]*\n\s+at /);
  assert.match(out[1], /^starpo: internal error: /);
});
