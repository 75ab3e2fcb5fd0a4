// The README's first command, run as a newcomer runs it: it must work and learn what the README says it learns.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const COMMAND = 'npx starpo train --config configs/bandit-quick.json';

test("the README's first command trains Bandit to at least 90% validation success (it says 95–97%)", () => {
  const firstBlock = readFileSync(join(ROOT, 'README.md'), 'utf8').split('```')[1];
  assert.ok(firstBlock.includes(COMMAND), `the README's first block still runs ${COMMAND}`);
  const cwd = mkdtempSync(join(tmpdir(), 'starpo-quickstart-'));
  try {
    const args = [join(ROOT, 'bin/starpo.js'), 'train', '--config', join(ROOT, 'configs/bandit-quick.json')];
    const run = spawnSync(process.execPath, args, {
      cwd,
      encoding: 'utf8',
      env: { ...process.env, STARPO_LOG_PRETTY: '0', STARPO_LOG_LEVEL: 'info' },
    });
    assert.equal(run.status, 0, run.stderr);
    const iterations = run.stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string; iteration?: number; valSuccess?: number })
      .filter((l) => l.msg === 'iteration');
    assert.equal(iterations.at(-1)?.iteration, 30);
    assert.ok(iterations.at(-1)!.valSuccess! >= 0.9, `validation success ${iterations.at(-1)!.valSuccess}`);
    assert.match(run.stdout, /finished iteration 30/);
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
});
