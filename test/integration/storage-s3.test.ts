import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { createS3CheckpointStore, loopbackS3Client } from '../../src/storage/s3-store.ts';
import { CheckpointConflictError, CheckpointNotFoundError } from '../../src/storage/errors.ts';
import { parseStorageUri } from '../../src/storage/uri.ts';
import { CorruptDataError } from '../../src/errors.ts';

const MiB = 1024 * 1024;
const T30 = { timeout: 30_000 };
const s3 = loopbackS3Client();
const freshStore = (bucket = `ckpt-${randomUUID()}`) => ({
  bucket,
  store: createS3CheckpointStore({ bucket, multipartThresholdBytes: 6 * MiB, partSizeBytes: 5 * MiB }),
});
const weights = Buffer.from('small weights file');

async function objectKeys(bucket: string): Promise<string[]> {
  return ((await s3.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents ?? []).map((o) => o.Key!);
}

test('a checkpoint with a multipart file saves, lists and loads back verified', { timeout: 60_000 }, async () => {
  const { bucket, store } = freshStore();
  const big = Buffer.alloc(11 * MiB + 3);
  for (let i = 0; i < big.length; i += 4096) big[i] = i % 251;
  const path = join(mkdtempSync(join(tmpdir(), 'starpo-s3-')), 'model.safetensors');
  writeFileSync(path, big);
  const files = [
    { name: 'model.safetensors', path },
    { name: 'rng.json', bytes: weights },
  ];
  const saved = await store.save('run-1', 'L0', 7, files);
  const bigKey = parseStorageUri(saved.files[0].uri);
  assert.equal(bigKey.scheme === 's3' && bigKey.bucket, bucket);
  const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: bigKey.scheme === 's3' ? bigKey.key : '' }));
  assert.match(head.ETag ?? '', /-3"?$/); // three parts: 5 + 5 + 1 MiB
  assert.deepEqual(
    (await store.list('run-1')).map((c) => [c.lineageId, c.iteration, c.uri]),
    [['L0', 7, `s3://${bucket}/runs/run-1/checkpoints/L0/00000007/`]],
  );
  const loaded = await store.load('run-1', 'L0', 7);
  assert.ok(loaded.files[0].bytes!.equals(big));
  assert.deepEqual(loaded.files[1].bytes, weights);
});

test('a flipped byte in a stored object is refused naming the file', { timeout: 30_000 }, async () => {
  const { bucket, store } = freshStore();
  const saved = await store.save('run-1', 'L0', 1, [{ name: 'model.bin', bytes: weights }]);
  const loc = parseStorageUri(saved.files[0].uri);
  const Key = loc.scheme === 's3' ? loc.key : '';
  const stored = await s3.send(new GetObjectCommand({ Bucket: bucket, Key }));
  const bytes = Buffer.from(await stored.Body!.transformToByteArray());
  bytes[3] ^= 0x20;
  await s3.send(new PutObjectCommand({ Bucket: bucket, Key, Body: bytes }));
  await assert.rejects(
    store.load('run-1', 'L0', 1),
    (err: unknown) => err instanceof CorruptDataError && /file model\.bin fails its integrity check/.test(err.message),
  );
});

/**
 * A client that misses the manifest on its first look, as a writer does that checks just before another
 * commits. (Deterministic on purpose: S3Mock 4.12.4 does not serialise truly concurrent conditional PUTs,
 * so two racing writers can both get 200 there; real S3 answers one of them 412 or 409.)
 */
function lateCheckingClient(): S3Client {
  const client = loopbackS3Client();
  let missed = false;
  client.middlewareStack.add(
    (next) => async (args) => {
      const input = args.input as { Key?: string; Body?: unknown };
      if (!missed && input.Key?.endsWith('manifest.json') && input.Body === undefined) {
        missed = true;
        throw Object.assign(new Error('not yet'), { name: 'NoSuchKey', $metadata: { httpStatusCode: 404 } });
      }
      return next(args);
    },
    { step: 'initialize' },
  );
  return client;
}

test("a second writer that missed the first one's manifest is refused by the conditional put", T30, async () => {
  const { bucket, store } = freshStore();
  await store.save('run-1', 'L0', 2, [{ name: 'model.bin', bytes: Buffer.from('writer A') }]);
  const late = createS3CheckpointStore({ bucket, client: lateCheckingClient() });
  await assert.rejects(
    late.save('run-1', 'L0', 2, [{ name: 'model.bin', bytes: Buffer.from('writer B') }]),
    (err: unknown) => err instanceof CheckpointConflictError && /different content/.test(err.message),
  );
  assert.deepEqual((await store.load('run-1', 'L0', 2)).files[0].bytes, Buffer.from('writer A'));
});

test('saving the same content again returns the existing checkpoint', { timeout: 30_000 }, async () => {
  const { store } = freshStore();
  const first = await store.save('run-1', 'L0', 3, [{ name: 'model.bin', bytes: weights }]);
  assert.deepEqual(await store.save('run-1', 'L0', 3, [{ name: 'model.bin', bytes: weights }]), first);
});

test('a checkpoint whose manifest was never written is invisible', { timeout: 30_000 }, async () => {
  const { bucket, store } = freshStore();
  await store.save('run-1', 'L0', 1, [{ name: 'model.bin', bytes: weights }]);
  const orphan = 'runs/run-1/checkpoints/L0/00000002/data/00/model.bin';
  await s3.send(new PutObjectCommand({ Bucket: bucket, Key: orphan, Body: 'x' }));
  assert.deepEqual(
    (await store.list('run-1')).map((c) => c.iteration),
    [1],
  );
  assert.equal((await store.latest('run-1'))?.iteration, 1);
  await assert.rejects(store.load('run-1', 'L0', 2), CheckpointNotFoundError);
});

test('latest prefers the newest lineage; delete removes manifest and files', { timeout: 30_000 }, async () => {
  const { bucket, store } = freshStore();
  await store.save('run-1', 'L0', 5, [{ name: 'model.bin', bytes: weights }]);
  await new Promise((r) => setTimeout(r, 5));
  await store.save('run-1', 'L1', 4, [{ name: 'model.bin', bytes: weights }]);
  assert.equal((await store.latest('run-1'))?.lineageId, 'L1');
  assert.equal((await store.latest('run-1', 'L0'))?.iteration, 5);
  await store.delete('run-1', 'L0', 5);
  await store.delete('run-1', 'L1', 4);
  assert.deepEqual(await store.list('run-1'), []);
  assert.deepEqual(await objectKeys(bucket), []);
});
