/**
 * Where the report finds a run's tokenizer, against a real tiny run trained here (character tokenizer,
 * compact template): its checkpoint first, its config when the checkpoints are gone, else ids only.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalEventLog } from '../../../src/events/index.ts';
import { log, logToFile } from '../../../src/log.ts';
import { loadReport } from '../../../src/report/load.ts';
import type { RunReport } from '../../../src/report/model.ts';
import { openSource } from '../../../src/report/source.ts';
import { resolveConfig } from '../../../src/rl/config.ts';
import { trainEmbedded } from '../../../src/embedded/driver.ts';
import { scratchTokenizer } from '../../../src/rl/vocabulary.ts';
import { run, trajectory } from './fixtures.ts';

const scratch = mkdtempSync(join(tmpdir(), 'starpo-report-tokens-'));
const root = join(scratch, 'runs');
after(() => rmSync(scratch, { recursive: true, force: true }));
const config = resolveConfig({
  preset: 'starpo-s',
  overrides: [
    'env=sokoban',
    'maxTurns=2',
    'envGroups=1',
    'groupSize=2',
    'miniBatchSize=2',
    'iterations=2',
    'threads=1',
    'valSeeds=1',
    'valEvery=2',
    'modelLayers=1',
    'modelHidden=16',
    'modelFfn=32',
    'filter=none',
    'maxResponseTokens=6',
  ],
});

async function report(runRoot: string, runId: string): Promise<RunReport> {
  const source = openSource([runId], { kind: 'local', runsDir: runRoot });
  try {
    return (await loadReport(source)).runs[0];
  } finally {
    await source.close();
  }
}

before(
  async () => {
    await trainEmbedded({ root, runId: 'tiny', config });
  },
  { timeout: 120_000 },
);

test("a real run's trajectories decode back to their text with the tokenizer of its last checkpoint", async () => {
  const r = await report(root, 'tiny');
  assert.equal(r.tokens.tokenizer, 'checkpoint main/00000002');
  const chars = scratchTokenizer();
  assert.deepEqual(r.tokens.stop, chars.encode('\n'));
  assert.ok(r.trajectories.length > 0);
  for (const t of r.trajectories) {
    const { ids, roles, audit } = t.tokens!;
    assert.equal(roles.length, ids.length);
    assert.equal(ids.map((id) => r.tokens.text[id]).join(''), chars.decode(ids));
    assert.equal(audit.responses.length, t.turns.length);
    audit.responses.forEach((span, k) => {
      const written = ids
        .slice(span.start, span.end)
        .map((id) => r.tokens.text[id])
        .join('');
      assert.equal(written, t.turns[k].response + (span.stop ? '\n' : ''), `turn ${k + 1}`);
    });
  }
});

test('without its checkpoints a run from scratch still decodes, with the built-in tokenizer its config names', async () => {
  const copy = mkdtempSync(join(scratch, 'nockpt-'));
  await trainEmbedded({ root: copy, runId: 'tiny', config });
  rmSync(join(copy, 'tiny', 'checkpoints'), { recursive: true });
  const warnings: string[] = [];
  const restore = logToFile(join(copy, 'report.log'), (line) => warnings.push(JSON.parse(line).msg));
  const level = log.level;
  log.level = 'warn';
  let r: RunReport;
  try {
    r = await report(copy, 'tiny');
  } finally {
    log.level = level;
    restore();
  }
  assert.equal(r.tokens.tokenizer, 'the built-in character tokenizer');
  assert.ok(Object.keys(r.tokens.text).length > 0);
  // the fallback is said, with why the checkpoint's own tokenizer was not read
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /^checkpoint main\/\d{8} could not be read \(.+\): tokens decoded with the built-in/);
});

test('a run whose tokenizer cannot be found keeps its ids and roles and says why in one line', async () => {
  const lost = mkdtempSync(join(scratch, 'notok-'));
  const log = createLocalEventLog({ root: lost });
  const t = { ...trajectory(1, 0, 0), tokenIds: [5, 6, 7], tokenRoles: '204' };
  await log.append([run('r', { ...config, model: join(lost, 'no-such-model') }), t]);
  await log.close();
  const r = await report(lost, 'r');
  assert.deepEqual([r.tokens.text, r.tokens.tokenizer, r.tokens.stop], [{}, null, null]);
  assert.match(
    r.tokens.note!,
    /^no tokenizer: the log has no checkpoint; the run config's model could not be loaded \(.*no-such-model/,
  );
  assert.doesNotMatch(r.tokens.note!, /\n/);
  assert.deepEqual([r.trajectories[0].tokens!.ids, r.trajectories[0].tokens!.roles], [[5, 6, 7], '204']);
});
