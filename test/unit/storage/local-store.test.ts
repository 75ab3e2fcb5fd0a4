import { test } from 'node:test';
import { createHash } from 'node:crypto';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalCheckpointStore } from '../../../src/storage/local-store.ts';
import { CheckpointConflictError, CheckpointNotFoundError } from '../../../src/storage/errors.ts';
import { formatStorageUri, parseStorageUri } from '../../../src/storage/uri.ts';
import { createCheckpointStore } from '../../../src/storage/index.ts';
import { CorruptDataError } from '../../../src/errors.ts';

const fresh = () => {
  const root = mkdtempSync(join(tmpdir(), 'starpo-ckpt-'));
  return { root, store: createLocalCheckpointStore({ root }) };
};
const ckptDir = (root: string, lineage: string, iteration: number) =>
  join(root, 'run-1', 'checkpoints', lineage, String(iteration).padStart(8, '0'));
const weights = Buffer.from('weights: 0123456789');

test('files saved from bytes and from a path load back verified', async () => {
  const { root, store } = fresh();
  const src = join(root, 'optimizer.bin');
  writeFileSync(src, Buffer.alloc(3 << 20, 7));
  const files = [
    { name: 'model.bin', bytes: weights },
    { name: 'optimizer.bin', path: src },
  ];
  const saved = await store.save('run-1', 'L0', 3, files);
  assert.equal(saved.totalBytes, weights.length + (3 << 20));
  assert.equal(parseStorageUri(saved.manifestUri).scheme, 'file');
  const loaded = await store.load('run-1', 'L0', 3);
  const sizes = loaded.files.map((f) => [f.name, f.bytes?.length]);
  assert.deepEqual(sizes, [
    ['model.bin', weights.length],
    ['optimizer.bin', 3 << 20],
  ]);
  assert.deepEqual(loaded.files[0].bytes, weights);
});

test('a disposable file is moved into place, a kept one copied; both are hashed and load back verified', async () => {
  const { root, store } = fresh();
  const [moved, kept] = ['moved.bin', 'kept.bin'].map((f) => join(root, f));
  writeFileSync(moved, Buffer.alloc(2 << 20, 3));
  writeFileSync(kept, Buffer.alloc(1 << 20, 5));
  const saved = await store.save('run-1', 'L0', 1, [
    { name: 'a.bin', path: moved, disposable: true },
    { name: 'b.bin', path: kept },
  ]);
  assert.ok(!existsSync(moved), 'a disposable file is moved, not copied');
  assert.deepEqual(readFileSync(kept), Buffer.alloc(1 << 20, 5), 'a kept file stays where it was');
  assert.deepEqual(
    saved.files.map((f) => [f.name, f.sizeBytes]),
    [
      ['a.bin', 2 << 20],
      ['b.bin', 1 << 20],
    ],
  );
  const loaded = await store.load('run-1', 'L0', 1);
  assert.deepEqual(loaded.files[0].bytes, Buffer.alloc(2 << 20, 3));
  // The manifest's hash is the moved file's: one flipped byte is refused.
  const placed = join(ckptDir(root, 'L0', 1), 'a.bin');
  const bytes = readFileSync(placed);
  bytes[7] ^= 1;
  writeFileSync(placed, bytes);
  await assert.rejects(store.load('run-1', 'L0', 1), CorruptDataError);
});

test("a moved file's digest its writer gives is listed as given (not read again) and checked on load", async () => {
  const { root, store } = fresh();
  const [right, wrong] = ['right.bin', 'wrong.bin'].map((f) => join(root, f));
  writeFileSync(right, weights);
  writeFileSync(wrong, weights);
  const sha256 = createHash('sha256').update(weights).digest('hex');
  const saved = await store.save('run-1', 'L0', 1, [
    { name: 'a.bin', path: right, disposable: true, sha256 },
    { name: 'b.bin', path: wrong, disposable: true, sha256: '0'.repeat(64) },
  ]);
  assert.deepEqual(
    saved.files.map((f) => [f.sha256, f.sizeBytes]),
    [
      [sha256, weights.length],
      ['0'.repeat(64), weights.length],
    ],
  );
  assert.deepEqual((await store.load('run-1', 'L0', 1, { only: ['a.bin'] })).files[0].bytes, weights);
  await assert.rejects(
    store.load('run-1', 'L0', 1, { only: ['b.bin'] }),
    (err: unknown) => err instanceof CorruptDataError && /file b\.bin fails its integrity check/.test(err.message),
  );
});

test('a load into a directory writes the verified files there', async () => {
  const { root, store } = fresh();
  const files = [
    { name: 'model.bin', bytes: weights },
    { name: 'rng.json', bytes: Buffer.from('{}') },
  ];
  await store.save('run-1', 'L0', 1, files);
  const out = join(root, 'restore');
  const loaded = await store.load('run-1', 'L0', 1, { toDirectory: out, only: ['model.bin'] });
  assert.deepEqual(
    loaded.files.map((f) => f.path),
    [join(out, 'model.bin')],
  );
  assert.deepEqual(readFileSync(join(out, 'model.bin')), weights);
});

test('a flipped byte is refused with CorruptDataError naming the file', async () => {
  const { root, store } = fresh();
  await store.save('run-1', 'L0', 1, [{ name: 'model.bin', bytes: weights }]);
  const path = join(ckptDir(root, 'L0', 1), 'model.bin');
  const bytes = readFileSync(path);
  bytes[5] ^= 1;
  writeFileSync(path, bytes);
  await assert.rejects(
    store.load('run-1', 'L0', 1),
    (err: unknown) => err instanceof CorruptDataError && /file model\.bin fails its integrity check/.test(err.message),
  );
});

test('a half-written checkpoint (no manifest) is invisible and a save replaces it', async () => {
  const { root, store } = fresh();
  mkdirSync(ckptDir(root, 'L0', 2), { recursive: true });
  writeFileSync(join(ckptDir(root, 'L0', 2), 'model.bin'), 'partial');
  mkdirSync(join(root, 'run-1', 'checkpoints', 'L0', '.00000004.tmp-crashed'));
  assert.deepEqual(await store.list('run-1'), []);
  await assert.rejects(store.load('run-1', 'L0', 2), CheckpointNotFoundError);
  await store.save('run-1', 'L0', 2, [{ name: 'model.bin', bytes: weights }]);
  assert.deepEqual((await store.load('run-1', 'L0', 2)).files[0].bytes, weights);
});

test('saving the same content again is a no-op; different content is a conflict', async () => {
  const { store } = fresh();
  const first = await store.save('run-1', 'L0', 1, [{ name: 'model.bin', bytes: weights }]);
  const again = await store.save('run-1', 'L0', 1, [{ name: 'model.bin', bytes: weights }]);
  assert.deepEqual(again, first);
  const other = [{ name: 'model.bin', bytes: Buffer.from('other') }];
  await assert.rejects(store.save('run-1', 'L0', 1, other), CheckpointConflictError);
  assert.deepEqual((await store.load('run-1', 'L0', 1)).files[0].bytes, weights);
});

test('list orders by lineage then iteration; latest follows the lineage or the newest manifest', async () => {
  const { store } = fresh();
  for (const [lineage, iteration] of [
    ['L0', 1],
    ['L0', 2],
    ['L0', 10],
    ['L1', 3],
    ['L1', 4],
  ] as const) {
    await store.save('run-1', lineage, iteration, [{ name: 'model.bin', bytes: weights }]);
    await new Promise((r) => setTimeout(r, 5)); // distinct manifest times
  }
  const listed = (await store.list('run-1')).map((c) => `${c.lineageId}@${c.iteration}`);
  assert.deepEqual(listed, ['L0@1', 'L0@2', 'L0@10', 'L1@3', 'L1@4']);
  assert.equal((await store.latest('run-1', 'L0'))?.iteration, 10);
  assert.equal((await store.latest('run-1'))?.lineageId, 'L1');
  assert.equal(await store.latest('run-2'), undefined);
});

test('a deleted checkpoint disappears; deleting a missing one is fine', async () => {
  const { root, store } = fresh();
  await store.save('run-1', 'L0', 1, [{ name: 'model.bin', bytes: weights }]);
  await store.delete('run-1', 'L0', 1);
  await store.delete('run-1', 'L0', 1);
  assert.deepEqual(await store.list('run-1'), []);
  assert.deepEqual(readdirSync(join(root, 'run-1', 'checkpoints', 'L0')), []);
});

test('file names that could escape the checkpoint or shadow the manifest are refused', async () => {
  const { store } = fresh();
  for (const name of ['../x', 'manifest.json', '.hidden', 'a/b']) {
    await assert.rejects(store.save('run-1', 'L0', 1, [{ name, bytes: weights }]), /is invalid, reserved or repeated/);
  }
});

test('a store opened from a file URI saves under that directory', async () => {
  const { root } = fresh();
  const store = createCheckpointStore(formatStorageUri({ scheme: 'file', path: root }));
  const saved = await store.save('run-1', 'L0', 1, [{ name: 'model.bin', bytes: weights }]);
  assert.equal(saved.uri, `file://${ckptDir(root, 'L0', 1)}/`);
  assert.deepEqual(readFileSync(join(ckptDir(root, 'L0', 1), 'model.bin')), weights);
});

test('a run directory copied under another name loads its checkpoints (manifests name files relative to them)', async () => {
  const { root, store } = fresh();
  await store.save('run-1', 'L0', 2, [{ name: 'model.bin', bytes: weights }]);
  cpSync(join(root, 'run-1'), join(root, 'copy'), { recursive: true });
  const loaded = await store.load('copy', 'L0', 2);
  assert.deepEqual(loaded.files[0].bytes, weights);
  assert.equal(loaded.manifest.runId, 'run-1');
  assert.deepEqual(
    (await store.list('copy')).map((c) => [c.runId, c.iteration]),
    [['copy', 2]],
  );
});

test('a file the manifest lists but the directory lacks is a CorruptDataError naming it, not a raw ENOENT', async () => {
  const { root, store } = fresh();
  await store.save('run-1', 'L0', 4, [
    { name: 'model.bin', bytes: weights },
    { name: 'optimizer.bin', bytes: weights },
  ]);
  rmSync(join(ckptDir(root, 'L0', 4), 'optimizer.bin'));
  await assert.rejects(
    store.load('run-1', 'L0', 4, { toDirectory: join(root, 'out') }),
    (e: unknown) =>
      e instanceof CorruptDataError &&
      e.message ===
        'checkpoint run-1/L0@4: file optimizer.bin is listed in its manifest ' +
          `but missing from ${ckptDir(root, 'L0', 4)}/; an earlier checkpoint k still resumes: starpo resume ` +
          '<run> --from-iteration k',
  );
});
