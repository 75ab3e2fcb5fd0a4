import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../../bin/starpo.js', import.meta.url));

test(
  'doctor reports each execution provider with its state: cpu working and required, cuda and webgpu optional',
  { timeout: 120_000 },
  () => {
    const r = spawnSync(process.execPath, [BIN, 'doctor', '--json'], { encoding: 'utf8', timeout: 110_000 });
    const rows = r.stdout
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l));
    const byName = Object.fromEntries(rows.map((c) => [c.name, c]));
    assert.deepEqual(
      ['provider cpu', 'provider cuda', 'provider webgpu'].map((n) => byName[n]?.required),
      [true, false, false],
    );
    assert.deepEqual([byName['provider cpu'].ok, byName['provider cpu'].state], [true, 'working']);
    assert.match(byName['provider cpu'].detail, /^working \(\d+ threads\)$/);
    if (!existsSync('/proc/driver/nvidia/version')) {
      // No NVIDIA kernel module: whatever is installed, a cuda session cannot run, and doctor says why.
      assert.equal(byName['provider cuda'].ok, false);
      assert.match(byName['provider cuda'].state, /^(not-installed|no-driver|no-device)$/);
    }
    assert.equal(r.status, 0, 'unavailable GPU providers do not fail doctor');
  },
);
