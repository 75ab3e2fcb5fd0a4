/**
 * The services' data is never wiped by a start: what each keeps is recorded when first created, data that
 * vanished or was re-formatted since is refused in one line, and only `services reset --yes` deletes it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'starpo-services-data-'));
process.env.STARPO_SERVICES_DIR = dir; // read when paths.ts loads, so before the imports below
const { checkDataBeforeStart, dataState, recordData } = await import('../../../src/services/data.ts');
const { serviceByName } = await import('../../../src/services/manager.ts');
const { describeData, reset } = await import('../../../src/cli/commands/services.ts');
const { localDataServices, recordRunOn, runsOn } = await import('../../../src/services/run-ledger.ts');

const kafka = serviceByName('kafka');
const s3 = serviceByName('s3');
const meta = join(dir, 'kafka', 'data', 'meta.properties');
const format = (clusterId: string) => {
  mkdirSync(join(dir, 'kafka', 'data'), { recursive: true });
  writeFileSync(meta, `version=1\ncluster.id=${clusterId}\nnode.id=1\n`);
};

test('kafka data: kept, then re-formatted, then gone, each refused at start in one line', () => {
  assert.deepEqual(dataState(kafka), { kind: 'none' });
  format('cluster-a');
  recordData(kafka, new Date('2026-12-01T00:00:00Z'));
  const kept = dataState(kafka);
  assert.equal(kept.kind, 'kept');
  assert.match(describeData(kept), /^kept since 2026-12-01T00:00:00.000Z \(0\.0 MiB\)$/);
  recordData(kafka); // a later start keeps the first record
  assert.match(readFileSync(join(dir, 'kafka', 'data.json'), 'utf8'), /2026-12-01.*cluster-a/);
  checkDataBeforeStart(kafka);

  format('cluster-b'); // formatted afresh behind starpo's back
  const reformatted =
    /^kafka: its data \S+kafka\/data was re-formatted \(created 2026-12-01T00:00:00.000Z\): the event /;
  assert.throws(
    () => checkDataBeforeStart(kafka),
    (e: Error) =>
      reformatted.test(e.message) &&
      e.message.endsWith('is lost; `starpo services reset kafka --yes` starts it empty') &&
      !e.message.includes('\n'),
  );
  rmSync(join(dir, 'kafka', 'data'), { recursive: true });
  assert.throws(() => checkDataBeforeStart(kafka), { message: /^kafka: its data \S+ is gone \(created / });
  assert.match(describeData(dataState(kafka)), /^VANISHED: \S+kafka\/data is gone$/);
});

test('services reset lists what it would delete and deletes only with --yes', async () => {
  const root = join(dir, 's3', 'root', 'bucket');
  mkdirSync(root, { recursive: true });
  writeFileSync(join(root, 'checkpoint'), Buffer.alloc(3 << 20));
  recordData(s3);
  const said: string[] = [];
  await assert.rejects(
    reset(['s3'], {}, (l) => said.push(l)),
    { message: 's3: the data above is deleted for good only by `starpo services reset s3 --yes`' },
  );
  assert.deepEqual(said, [`would delete s3: ${join(dir, 's3', 'root')} (3.0 MiB)`]);
  assert.ok(existsSync(join(root, 'checkpoint')), 'nothing is deleted without --yes');
  await reset(['s3'], { yes: true }, (l) => said.push(l));
  assert.equal(said.at(-1), 's3: data deleted; the next start begins empty');
  assert.deepEqual(dataState(s3), { kind: 'none' });
  assert.equal(existsSync(join(dir, 's3', 'root')), false);
  // A reset service starts afresh: its vanished kafka data above is forgotten too.
  await reset(['kafka'], { yes: true }, () => {});
  checkDataBeforeStart(kafka);
});

test("a vanished service's line names the durable runs that kept data in it; a reset forgets them", async () => {
  format('cluster-c');
  recordData(kafka, new Date('2026-12-02T00:00:00Z'));
  for (const run of ['r1', 'r2', 'r1', 'r3', 'r4', 'r5', 'r6', 'r7']) recordRunOn('kafka', run);
  assert.deepEqual(runsOn('kafka'), ['r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7']);
  writeFileSync(
    join(dir, 'kafka', 'runs.jsonl'),
    `${readFileSync(join(dir, 'kafka', 'runs.jsonl'), 'utf8')}{"runId":"r`,
  );
  assert.equal(runsOn('kafka').length, 7, 'a line a crash cut short is skipped');
  rmSync(join(dir, 'kafka', 'data'), { recursive: true });
  assert.throws(() => checkDataBeforeStart(kafka), {
    message: /is lost, among them the runs r3, r4, r5, r6, r7 and 2 more; `starpo services reset kafka --yes`/,
  });
  await reset(['kafka'], { yes: true }, () => {});
  assert.deepEqual(runsOn('kafka'), []);
});

test('only runs on the local services are listed: the default brokers, an s3:// store on the local S3', () => {
  assert.deepEqual(localDataServices({}, 's3://starpo/runs/'), ['kafka', 's3']);
  assert.deepEqual(localDataServices({ brokers: ['kafka.example:9092'] }, 'file:///tmp/x/'), []);
  process.env.STARPO_S3_ENDPOINT = 'http://s3.example:9000';
  try {
    assert.deepEqual(localDataServices({}, 's3://starpo/runs/'), ['kafka']);
  } finally {
    delete process.env.STARPO_S3_ENDPOINT;
  }
});
