import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import {
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  PutObjectCommand,
  S3ServiceException,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { loopbackS3Client } from '../../src/storage/s3-store.ts';

const s3 = loopbackS3Client();

async function freshBucket(): Promise<string> {
  const bucket = `smoke-${randomUUID()}`;
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  return bucket;
}

async function read(bucket: string, key: string): Promise<Buffer> {
  const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return Buffer.from(await out.Body!.transformToByteArray());
}

test('puts an object to S3Mock and reads the same bytes back', async () => {
  const bucket = await freshBucket();
  await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'a/b.txt', Body: 'checkpoint bytes' }));
  assert.equal((await read(bucket, 'a/b.txt')).toString(), 'checkpoint bytes');
});

test('a multipart upload of two parts reads back as their concatenation', async () => {
  const bucket = await freshBucket();
  const part1 = Buffer.alloc(5 * 1024 * 1024, 1); // S3's minimum size for every part but the last
  const part2 = Buffer.from('tail');
  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'big' }));
  const parts = [];
  for (const [i, body] of [part1, part2].entries()) {
    const { ETag } = await s3.send(
      new UploadPartCommand({ Bucket: bucket, Key: 'big', UploadId, PartNumber: i + 1, Body: body }),
    );
    parts.push({ ETag, PartNumber: i + 1 });
  }
  await s3.send(
    new CompleteMultipartUploadCommand({ Bucket: bucket, Key: 'big', UploadId, MultipartUpload: { Parts: parts } }),
  );
  assert.deepEqual(await read(bucket, 'big'), Buffer.concat([part1, part2]));
});

test('a conditional put (If-None-Match: *) succeeds once and is refused the second time', async () => {
  const bucket = await freshBucket();
  const put = (body: string) =>
    s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'manifest.json', Body: body, IfNoneMatch: '*' }));
  await put('first');
  await assert.rejects(
    put('second'),
    (err: unknown) => err instanceof S3ServiceException && err.$metadata.httpStatusCode === 412,
  );
  assert.equal((await read(bucket, 'manifest.json')).toString(), 'first');
});
