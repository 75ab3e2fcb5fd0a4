import { test } from 'node:test';
import assert from 'node:assert/strict';
import { packArtifact, unpackArtifact } from '../../src/durable/artifact-codec.ts';
import { artifactKey, createArtifactStore, iterationArtifacts } from '../../src/storage/artifacts.ts';
import { uniqueId } from '../../src/durable/harness.ts';
import { chunksOf, fromWire, shardGroups, toWire } from '../../src/durable/protocol.ts';
import { CorruptDataError } from '../../src/errors.ts';

test('shards are contiguous, near-equal ranges of groups; never more shards than groups', () => {
  assert.deepEqual(shardGroups(8, 3), [
    [0, 1],
    [2, 3, 4],
    [5, 6, 7],
  ]);
  assert.deepEqual(shardGroups(2, 4), [[0], [1]]);
  assert.deepEqual(chunksOf([4, 5, 6], 2), [[4, 5], [6]]);
});

test('metrics cross Temporal with NaN and infinities intact', () => {
  const wire = toWire({ a: 1.5, b: NaN, c: -Infinity });
  assert.deepEqual(JSON.parse(JSON.stringify(wire)), { a: 1.5, b: 'NaN', c: '-Infinity' });
  assert.deepEqual(fromWire(wire), { a: 1.5, b: NaN, c: -Infinity });
});

test('an artifact round-trips its metadata and typed arrays bit for bit', () => {
  const f = Float32Array.from([0.1, -0, NaN, 3e38]);
  const bytes = packArtifact({ kept: ['a'] }, { f, i: Int32Array.from([-1, 7]), absent: undefined });
  const { meta, arrays } = unpackArtifact<{ kept: string[] }>(bytes, 'x');
  assert.deepEqual(meta, { kept: ['a'] });
  assert.ok(Buffer.from(arrays.f.buffer).equals(Buffer.from(f.buffer)));
  assert.deepEqual(Array.from(arrays.i), [-1, 7]);
  assert.deepEqual(Object.keys(arrays), ['f', 'i']);
  assert.throws(() => unpackArtifact(bytes.subarray(0, bytes.length - 4), 'x'), CorruptDataError);
});

test('artifact keys derive from run, lineage, iteration, stage and part only', () => {
  const id = { runId: 'r', lineageId: 'main', iteration: 7 };
  assert.equal(artifactKey(id, 'rollout', 'r0-s1-c0.json'), 'r/artifacts/main/00000007/rollout/r0-s1-c0.json');
  assert.throws(() => artifactKey({ ...id, runId: 'a/b' }, 'x', 'y'), /not a valid id/);
});

test("S3 artifacts: put, get, has, and deleting an iteration's folder", { timeout: 30_000 }, async () => {
  const bucket = uniqueId('artifacts');
  const id = { runId: 'r', lineageId: 'main', iteration: 1 };
  const write = createArtifactStore(`s3://${bucket}/runs/`);
  await write.put(artifactKey(id, 'score', 'scored.bin'), Buffer.from('abc'));
  const read = createArtifactStore(`s3://${bucket}/runs/`); // a fresh cache: reads from S3
  assert.equal((await read.get(artifactKey(id, 'score', 'scored.bin'))).toString(), 'abc');
  assert.equal(await read.has(artifactKey(id, 'score', 'missing')), false);
  await read.deletePrefix(iterationArtifacts(id));
  await assert.rejects(
    createArtifactStore(`s3://${bucket}/runs/`).get(artifactKey(id, 'score', 'scored.bin')),
    /does not exist/,
  );
});

test(
  'S3 artifacts: the keys directly in a folder, not those below it; none in a folder never written',
  {
    timeout: 30_000,
  },
  async () => {
    const store = createArtifactStore(`s3://${uniqueId('artifacts')}/runs/`);
    await store.put('r/lineages/main.json', Buffer.from('{}'));
    await store.put('r/lineages/f1-4.json', Buffer.from('{}'));
    await store.put('r/lineages/old/x.json', Buffer.from('{}'));
    assert.deepEqual(await store.keys('r/lineages/'), ['r/lineages/f1-4.json', 'r/lineages/main.json']);
    assert.deepEqual(await store.keys('q/lineages/'), []);
  },
);
