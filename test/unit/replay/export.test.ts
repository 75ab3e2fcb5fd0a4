import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { csvField, openTrajectoryExport } from '../../../src/replay/export.ts';
import { episodeSetup } from '../../../src/replay/reenact.ts';
import { config, ITERATION_1 } from './fixtures.ts';

const setup = episodeSetup(config);

async function exported(name: string): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'starpo-export-'));
  const sink = await openTrajectoryExport(join(dir, name));
  for (const e of ITERATION_1.slice(0, 2)) await sink.write(e, setup);
  await sink.close();
  assert.deepEqual(readdirSync(dir), [name], 'no temporary file left behind');
  return readFileSync(join(dir, name), 'utf8').trimEnd().split('\n');
}

test('CSV fields with commas, quotes or newlines are quoted, quotes doubled', () => {
  const fields = ['a', 'a,b', 'say "hi"', 'x\ny', 1.5, true].map(csvField);
  assert.deepEqual(fields, ['a', '"a,b"', '"say ""hi"""', '"x\ny"', '1.5', 'true']);
});

test('a CSV export has a header and one summary row per trajectory', async () => {
  const lines = await exported('t.csv');
  assert.equal(lines.length, 3);
  assert.ok(lines[0].startsWith('run_id,lineage_id,iteration,split,group,rollout_index,env,env_seed'));
  assert.equal(lines[1], 'r,main,1,train,0,0,bandit,4,0,true,1,1,2,1,1,0,false,"[[""Dragon""]]","[""D""]"');
});

test('a JSONL export holds each event as logged, with its key', async () => {
  const [first] = (await exported('t.jsonl')).map((l) => JSON.parse(l));
  assert.equal(first.key, 'r/main/1/trajectory/train/0/0');
  assert.deepEqual([first.turns[0].response, first.startedAt], ['D', '2025-01-02T03:04:05.678Z']);
});

test('an export name without .jsonl or .csv is refused', async () => {
  await assert.rejects(openTrajectoryExport('/tmp/t.parquet'), /use a \.jsonl or \.csv file name/);
});
