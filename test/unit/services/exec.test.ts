import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runToLog } from '../../../src/services/exec.ts';

test('a failed install step says why in its error: the tail of its log, not only where the log is', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'starpo-exec-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const log = join(dir, 'install.log');
  const script = 'for i in $(seq 1 30); do echo "line $i"; done; echo "go: proxy refused module x" >&2; exit 3';
  await assert.rejects(runToLog('temporal', 'sh', ['-c', script], log), (err: Error) => {
    assert.match(err.message, /^temporal: `sh -c .*` exited with 3; .*install\.log ends:\n/);
    assert.match(err.message, /go: proxy refused module x$/);
    assert.match(err.message, /line 30\n/);
    assert.doesNotMatch(err.message, /line 10\n/, 'only the tail');
    return true;
  });
  await runToLog('temporal', 'sh', ['-c', 'echo fine'], log);
});
