/**
 * Moving one checkpoint file to and from S3: a single PUT up to the multipart threshold, a multipart
 * upload above it (parts read from memory or from the file at their offsets, never the whole file),
 * and a streamed GET that hashes what it receives. (@aws-sdk/lib-storage is not a dependency.)
 */
import { createWriteStream } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  PutObjectCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { DigestCounter, type ContentDigest } from './hash.ts';
import type { CheckpointFileInput } from './types.ts';

export interface S3Target {
  client: S3Client;
  bucket: string;
}

export interface TransferLimits {
  multipartThresholdBytes: number;
  partSizeBytes: number;
}

/** Reads `length` bytes at `offset` of the input (a slice of memory, or a positioned file read). */
type PartReader = (offset: number, length: number) => Promise<Uint8Array>;

async function withPartReader<T>(input: CheckpointFileInput, use: (read: PartReader) => Promise<T>): Promise<T> {
  if ('bytes' in input) return use(async (offset, length) => input.bytes.subarray(offset, offset + length));
  const file = await open(input.path, 'r');
  try {
    return await use(async (offset, length) => {
      const buf = Buffer.alloc(length);
      const { bytesRead } = await file.read(buf, 0, length, offset);
      return buf.subarray(0, bytesRead);
    });
  } finally {
    await file.close();
  }
}

async function uploadParts(
  target: S3Target,
  key: string,
  size: number,
  partSize: number,
  read: PartReader,
): Promise<void> {
  const { client, bucket } = target;
  const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }));
  try {
    const parts: { ETag?: string; PartNumber: number }[] = [];
    for (let offset = 0, n = 1; offset < size; offset += partSize, n++) {
      const body = await read(offset, Math.min(partSize, size - offset));
      const upload = new UploadPartCommand({ Bucket: bucket, Key: key, UploadId, PartNumber: n, Body: body });
      const { ETag } = await client.send(upload);
      parts.push({ ETag, PartNumber: n });
    }
    const complete = { Bucket: bucket, Key: key, UploadId, MultipartUpload: { Parts: parts } };
    await client.send(new CompleteMultipartUploadCommand(complete));
  } catch (err) {
    // Parts of an unfinished upload are stored (and billed) until aborted.
    await client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId })).catch(() => undefined);
    throw err;
  }
}

/** Uploads the input to `key`; multipart when it is larger than the threshold. */
export async function uploadFile(
  target: S3Target,
  key: string,
  input: CheckpointFileInput,
  size: number,
  limits: TransferLimits,
): Promise<void> {
  if (size > limits.multipartThresholdBytes) {
    await withPartReader(input, (read) => uploadParts(target, key, size, limits.partSizeBytes, read));
    return;
  }
  const body = 'bytes' in input ? input.bytes : await readFile(input.path);
  await target.client.send(new PutObjectCommand({ Bucket: target.bucket, Key: key, Body: body }));
}

/** Streams an object, hashing it; into memory, or into `toPath` when given. */
export async function downloadFile(
  target: S3Target,
  key: string,
  toPath?: string,
): Promise<{ digest: ContentDigest; bytes?: Buffer }> {
  const out = await target.client.send(new GetObjectCommand({ Bucket: target.bucket, Key: key }));
  const counter = new DigestCounter();
  const chunks: Buffer[] = [];
  const sink =
    toPath === undefined
      ? new Writable({
          write(chunk: Buffer, _enc, done) {
            chunks.push(chunk);
            done();
          },
        })
      : createWriteStream(toPath);
  const body = out.Body as Readable;
  await pipeline(
    body,
    async function* (source: AsyncIterable<Buffer>) {
      for await (const chunk of source) {
        counter.update(chunk);
        yield chunk;
      }
    },
    sink,
  );
  return { digest: counter.digest(), bytes: toPath === undefined ? Buffer.concat(chunks) : undefined };
}
