import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { replayCommand, type ReplayFlags } from '../../../src/cli/commands/replay.ts';
import { reportCommand } from '../../../src/cli/commands/report.ts';
import { CorruptDataError } from '../../../src/errors.ts';
import { RECORDED, writeRun } from '../replay/fixtures.ts';

const flags = (root: string, more: Partial<ReplayFlags> = {}): ReplayFlags => ({
  source: 'files',
  runsDir: root,
  select: 'successful',
  split: 'all',
  ...more,
});

async function replay(root: string, more: Partial<ReplayFlags> = {}): Promise<{ code: number; lines: string[] }> {
  const lines: string[] = [];
  const code = await replayCommand('r', flags(root, more), (l) => lines.push(l));
  return { code, lines };
}

const tempRoot = () => mkdtempSync(join(tmpdir(), 'starpo-cli-replay-'));

test('replay of a faithful log exits 0 and names what it could not recompute', async () => {
  const root = tempRoot();
  await writeRun(root);
  const { code, lines } = await replay(root, { json: true });
  const [iteration, summary] = lines.map((l) => JSON.parse(l));
  assert.deepEqual([code, iteration.ok, iteration.checked], [0, true, 14]);
  assert.deepEqual(iteration.notRecomputable, ['actor/grad_norm']);
  assert.deepEqual([summary.failed, summary.trajectories], [[], 4]);
});

test('a recorded metric the events contradict fails the replay and is shown in the table', async () => {
  const root = tempRoot();
  await writeRun(root, { ...RECORDED, 'pass@2': 0.75 });
  const { code, lines } = await replay(root);
  assert.equal(code, 1);
  assert.match(lines[0], /MISMATCH pass@2: recorded 0\.750000, events give 0\.500000/);
  assert.match(lines[1], /1 iterations disagree: 1/);
});

test('bytes appended after the last indexed block: replay and report warn with their position, exit 0', async () => {
  const root = tempRoot();
  await writeRun(root);
  appendFileSync(join(root, 'r', 'events', '00000001.avro'), Buffer.from([1, 2, 3, 4, 5, 6, 7, 8, 9]));
  const { code, lines } = await replay(root, { json: true });
  const problem = JSON.parse(lines[1]);
  assert.deepEqual([code, problem.type, problem.kind, problem.severity], [0, 'problem', 'foreign-bytes', 'warning']);
  assert.ok(problem.where.endsWith(`00000001.avro@${problem.byteOffset}`));
  const table = await replay(root);
  const warning = /^WARNING: event log foreign-bytes at .*00000001\.avro@\d+: 9 bytes after the last indexed block: /m;
  assert.match(table.lines.join('\n'), warning);
  const [said, warned]: string[][] = [[], []];
  const reportFlags = { source: 'local', runsDir: root, out: join(root, 'r.html'), trajectoryIterations: '1' };
  await reportCommand(
    ['r'],
    reportFlags,
    (l) => said.push(l),
    (l) => warned.push(l),
  );
  assert.match(said[0]!, /^wrote .*r\.html/);
  assert.equal(warned.length, 1, warned.join('\n'));
  assert.match(warned[0]!, warning);
});

test('a changed byte fails the replay with one line naming the segment, the offset and the events lost', async () => {
  const root = tempRoot();
  await writeRun(root);
  const path = join(root, 'r', 'events', '00000001.avro');
  const bytes = readFileSync(path);
  bytes[bytes.length - 1] ^= 0x01; // the block's sync marker
  writeFileSync(path, bytes);
  const expected =
    /^event log damaged \(checksum-mismatch\) at .*\.avro@\d+: a block of 6 events fails its checksum; 6/;
  await assert.rejects(
    replay(root),
    (err: Error) => err instanceof CorruptDataError && !err.message.includes('\n') && expected.test(err.message),
  );
});

test('an emptied segment fails the replay; --allow-partial replays what precedes it and warns', async () => {
  const root = tempRoot();
  await writeRun(root);
  truncateSync(join(root, 'r', 'events', '00000001.avro'), 0);
  await assert.rejects(replay(root), /\(empty-segment\) at .*00000001\.avro@0: the file is empty; 6 acknowledged/);
  const { code, lines } = await replay(root, { allowPartial: true });
  assert.equal(code, 0);
  assert.match(lines.join('\n'), /^WARNING: partial replay, the log ends early: event log damaged \(empty-segment\)/m);
});

test('--export and --sft-dataset write their files and say how many records', async () => {
  const root = tempRoot();
  await writeRun(root);
  const [csv, sft] = [join(root, 'out.csv'), join(root, 'sft.jsonl')];
  const { code, lines } = await replay(root, { export: csv, sftDataset: sft, split: 'train' });
  assert.equal(code, 0);
  assert.deepEqual(lines.slice(-2), [`wrote ${csv}: {"written":4}`, `wrote ${sft}: {"written":1,"skippedDiverged":0}`]);
  assert.equal(readFileSync(csv, 'utf8').trimEnd().split('\n').length, 5);
});
