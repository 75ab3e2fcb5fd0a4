import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalEventLog } from '../../../src/events/index.ts';
import { openSource, writeReport } from '../../../src/report/index.ts';
import { iteration, run } from './fixtures.ts';

test('writeReport writes one HTML file, and refuses a run without events', async () => {
  const root = mkdtempSync(join(tmpdir(), 'starpo-write-'));
  const log = createLocalEventLog({ root });
  await log.append([run('r'), iteration(1, { success_rate: 0.5 })]);
  await log.close();
  const source = openSource(['r', 'missing'], { kind: 'local', runsDir: root });
  await assert.rejects(writeReport({ source, out: join(root, 'x.html') }), {
    message: `no events for run missing in ${root}`,
  });
  const one = openSource(['r'], { kind: 'local', runsDir: root });
  const written = await writeReport({ source: one, out: join(root, 'out', 'r.html') });
  assert.equal(written.bytes, readFileSync(join(root, 'out', 'r.html')).length);
  assert.deepEqual(written.pngs, []);
  await Promise.all([source.close(), one.close()]);
});
