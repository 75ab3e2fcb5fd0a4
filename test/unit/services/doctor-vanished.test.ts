/**
 * `doctor` shows a service whose data vanished since it was created, naming the durable runs that kept data there,
 * whatever answers on its port (a fresh, empty service would).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = mkdtempSync(join(tmpdir(), 'starpo-doctor-vanished-'));
process.env.STARPO_SERVICES_DIR = dir; // read when paths.ts loads, so before the imports below
const { recordData } = await import('../../../src/services/data.ts');
const { serviceByName } = await import('../../../src/services/manager.ts');
const { recordRunOn } = await import('../../../src/services/run-ledger.ts');
const BIN = fileURLToPath(new URL('../../../bin/starpo.js', import.meta.url));

test('doctor reports kafka data that vanished, with the runs whose events it held', { timeout: 120_000 }, () => {
  const data = join(dir, 'kafka', 'data');
  mkdirSync(data, { recursive: true });
  writeFileSync(join(data, 'meta.properties'), 'version=1\ncluster.id=cluster-a\nnode.id=1\n');
  recordData(serviceByName('kafka'), new Date('2026-12-01T00:00:00Z'));
  recordRunOn('kafka', 'sokoban-long');
  rmSync(data, { recursive: true });

  const r = spawnSync(process.execPath, [BIN, 'doctor', '--json'], {
    encoding: 'utf8',
    env: { ...process.env, STARPO_SERVICES_DIR: dir },
    timeout: 110_000,
  });
  const rows = r.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { name: string; ok: boolean; detail: string });
  const kafka = rows.find((row) => row.name === 'kafka')!;
  assert.equal(kafka.ok, false);
  assert.match(kafka.detail, /^its data \S+kafka\/data is gone \(created 2026-12-01T00:00:00.000Z\): the event log /);
  assert.match(kafka.detail, /among them run sokoban-long; `starpo services reset kafka --yes` starts it empty$/);
  assert.equal(rows.find((row) => row.name === 's3')?.detail.includes('gone'), false, 'only kafka vanished');
  rmSync(dir, { recursive: true, force: true });
});
