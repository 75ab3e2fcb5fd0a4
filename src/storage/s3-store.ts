/**
 * Checkpoints in S3 (path-style, so S3Mock and other S3-compatible stores work). Files go to
 * content-addressed keys under the checkpoint's prefix (<prefix><run>/checkpoints/<lineage>/<iter>/
 * data/<sha256>/<name>), then manifest.json is written last with If-None-Match: *. So a retry writes
 * the same keys, a checkpoint without a manifest is invisible, and a second writer with other content
 * can neither overwrite the first one's files nor its manifest.
 */
import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { ConfigError, StarpoError } from '../errors.ts';
import { endpoints } from '../endpoints.ts';
import { CheckpointConflictError, CheckpointNotFoundError, checkpointLabel } from './errors.ts';
import { digestBytes, fileDigest, type ContentDigest } from './hash.ts';
import { assertFileNames, checkpointPrefix, checkpointsPrefix, MANIFEST_NAME, parseManifestPath } from './layout.ts';
import { buildManifest, parseManifest, sameContent, selectFiles, serializeManifest, verifyDigest } from './manifest.ts';
import { downloadFile, uploadFile, type S3Target, type TransferLimits } from './s3-transfer.ts';
import { latestOf, savedCheckpoint } from './store-common.ts';
import { mapLimit } from './map-limit.ts';
import { formatStorageUri } from './uri.ts';
import type {
  CheckpointFileInput,
  CheckpointId,
  CheckpointInfo,
  CheckpointManifest,
  CheckpointStore,
  LoadedCheckpoint,
  LoadedFile,
  LoadOptions,
  ManifestFile,
  SavedCheckpoint,
} from './types.ts';

export interface S3CheckpointStoreOptions {
  bucket: string;
  /** Key prefix for every run (default "runs/"). */
  prefix?: string;
  /** A configured client (real AWS, credentials); default: path-style client for the local S3 endpoint. */
  client?: S3Client;
  endpoint?: string;
  region?: string;
  /** Files larger than this use multipart upload. Default 8 MiB. */
  multipartThresholdBytes?: number;
  /** Multipart part size; S3 requires at least 5 MiB for every part but the last. Default 8 MiB. */
  partSizeBytes?: number;
}

const MiB = 1024 * 1024;
/** Requests of one checkpoint in flight at once (each file is one PUT or GET; a 0.5B model's are multipart). */
const TRANSFERS = 6;
type SdkError = Error & { $metadata?: { httpStatusCode?: number } };
const status = (err: unknown): number | undefined => (err as SdkError).$metadata?.httpStatusCode;
const isNotFound = (err: unknown): boolean =>
  status(err) === 404 || ['NoSuchKey', 'NotFound'].includes((err as Error).name);

/**
 * Whether an S3 failure may pass on retry: no HTTP status (network), 5xx, 408/409/429, and replies the
 * SDK could not parse (or a 2xx whose body broke off: seen when S3 stops mid-save). An unparseable error reply
 * has the message `UnknownError`, and for a name whatever the SDK found: `UnknownError`, an error-code header,
 * or the status itself ("400" seen when S3Mock was stopped during a checkpoint's save).
 * Other 4xx (AccessDenied, NoSuchBucket, InvalidArgument) are configuration errors and fail at once.
 */
export function retryableS3Failure(err: unknown): boolean {
  const code = status(err);
  if (code === undefined || code >= 500 || code < 400) return true;
  const unparsed = (err as Error).name === 'UnknownError' || (err as Error).message === 'UnknownError';
  return [408, 409, 429].includes(code) || unparsed;
}

/** Wraps an S3 failure with the operation and whether a retry may help. */
function storeError(operation: string, cause: unknown): Error {
  if (cause instanceof StarpoError) return cause;
  const code = status(cause);
  const what = `${(cause as Error).name}: ${(cause as Error).message}${code === undefined ? '' : ` (HTTP ${code})`}`;
  return new StarpoError(`s3 checkpoint store: ${operation} failed: ${what}`, {
    cause,
    retryable: retryableS3Failure(cause),
    details: { operation, status: status(cause) },
  });
}

function limitsOf(options: S3CheckpointStoreOptions): TransferLimits {
  const partSizeBytes = options.partSizeBytes ?? 8 * MiB;
  const multipartThresholdBytes = options.multipartThresholdBytes ?? 8 * MiB;
  if (!Number.isSafeInteger(partSizeBytes) || partSizeBytes < 5 * MiB) {
    throw new ConfigError('s3.partSizeBytes', 'must be at least 5 MiB');
  }
  if (!Number.isSafeInteger(multipartThresholdBytes) || multipartThresholdBytes < 1) {
    throw new ConfigError('s3.multipartThresholdBytes', 'must be a positive integer');
  }
  return { partSizeBytes, multipartThresholdBytes };
}

/**
 * The client for starpo's own S3 server (S3Mock accepts any credentials; pass `client` for real S3), the one home
 * for checkpoints and durable artifacts alike. The SDK warns in every process on Node 20 that its releases after
 * January 2027 will need Node 22: not actionable here (starpo supports Node 20 and pins the SDK), and the warning
 * would garble the progress display, so it is switched off unless the user set the variable.
 */
export function loopbackS3Client(endpoint: string = endpoints.s3.endpoint, region = 'us-east-1'): S3Client {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  return new S3Client({
    endpoint,
    region,
    forcePathStyle: true,
    credentials: { accessKeyId: 'starpo', secretAccessKey: 'starpo' },
  });
}

class S3CheckpointStore implements CheckpointStore {
  private readonly target: S3Target;
  private readonly limits: TransferLimits;
  private readonly prefix: string;
  private bucketReady: Promise<void> | undefined;

  constructor(options: S3CheckpointStoreOptions) {
    this.target = {
      client: options.client ?? loopbackS3Client(options.endpoint, options.region),
      bucket: options.bucket,
    };
    this.limits = limitsOf(options);
    this.prefix = options.prefix ?? 'runs/';
  }

  private keyOf(id: CheckpointId, relative = ''): string {
    return `${this.prefix}${checkpointPrefix(id)}${relative}`;
  }

  private uriOf(key: string): string {
    return formatStorageUri({ scheme: 's3', bucket: this.target.bucket, key });
  }

  private info(id: CheckpointId): CheckpointInfo {
    return { ...id, uri: this.uriOf(this.keyOf(id)), manifestUri: this.uriOf(this.keyOf(id, MANIFEST_NAME)) };
  }

  private saved(id: CheckpointId, manifest: CheckpointManifest): SavedCheckpoint {
    return savedCheckpoint(this.info(id), manifest, (f) => this.uriOf(this.keyOf(id, f.key)));
  }

  /** Creates the bucket on first use if it does not exist. */
  private ensureBucket(): Promise<void> {
    const { client, bucket } = this.target;
    const create = async (err: unknown): Promise<void> => {
      if (!isNotFound(err)) throw err;
      await client.send(new CreateBucketCommand({ Bucket: bucket })).catch((e: Error) => {
        if (e.name !== 'BucketAlreadyOwnedByYou') throw e;
      });
    };
    this.bucketReady ??= client.send(new HeadBucketCommand({ Bucket: bucket })).then(() => undefined, create);
    this.bucketReady.catch(() => (this.bucketReady = undefined));
    return this.bucketReady;
  }

  async save(
    runId: string,
    lineageId: string,
    iteration: number,
    files: readonly CheckpointFileInput[],
  ): Promise<SavedCheckpoint> {
    const id = { runId, lineageId, iteration };
    assertFileNames(files.map((f) => f.name));
    try {
      await this.ensureBucket();
      const digests: ContentDigest[] = [];
      for (const f of files) digests.push('bytes' in f ? digestBytes(f.bytes) : await fileDigest(f.path, f.sha256));
      const entries = files.map((f, i): ManifestFile => ({
        name: f.name,
        key: `data/${digests[i].sha256}/${f.name}`,
        ...digests[i],
      }));
      const existing = await this.readManifest(id);
      if (existing !== undefined) return this.existing(id, existing, entries); // a retry: nothing to upload
      await mapLimit(files, TRANSFERS, (f, i) =>
        this.uploadOnce(this.keyOf(id, entries[i].key), f, digests[i].sizeBytes),
      );
      return await this.commit(id, buildManifest(id, entries));
    } catch (err) {
      throw storeError(`save ${checkpointLabel(id)}`, err);
    }
  }

  /** Uploads unless the content-addressed key already holds an object of that size (an earlier attempt). */
  private async uploadOnce(key: string, input: CheckpointFileInput, size: number): Promise<void> {
    const { client, bucket } = this.target;
    const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key })).catch((err: unknown) => {
      if (isNotFound(err)) return undefined;
      throw err;
    });
    if (head?.ContentLength !== size) await uploadFile(this.target, key, input, size, this.limits);
  }

  /** Writes the manifest only if none exists; on a lost race, the winner's content decides. */
  private async commit(id: CheckpointId, manifest: CheckpointManifest): Promise<SavedCheckpoint> {
    const put = new PutObjectCommand({
      Bucket: this.target.bucket,
      Key: this.keyOf(id, MANIFEST_NAME),
      Body: serializeManifest(manifest),
      ContentType: 'application/json',
      IfNoneMatch: '*',
    });
    try {
      await this.target.client.send(put);
      return this.saved(id, manifest);
    } catch (err) {
      if (status(err) !== 412) throw err;
      return this.existing(id, (await this.readManifest(id))!, manifest.files);
    }
  }

  private existing(id: CheckpointId, existing: CheckpointManifest, ours: ManifestFile[]): SavedCheckpoint {
    if (!sameContent(existing, { ...existing, files: ours })) {
      throw new CheckpointConflictError(id, 'already saved with different content');
    }
    return this.saved(id, existing);
  }

  private async readManifest(id: CheckpointId): Promise<CheckpointManifest | undefined> {
    try {
      const get = new GetObjectCommand({ Bucket: this.target.bucket, Key: this.keyOf(id, MANIFEST_NAME) });
      const out = await this.target.client.send(get);
      return parseManifest(Buffer.from(await out.Body!.transformToByteArray()), id);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async load(
    runId: string,
    lineageId: string,
    iteration: number,
    options: LoadOptions = {},
  ): Promise<LoadedCheckpoint> {
    const id = { runId, lineageId, iteration };
    try {
      const manifest = await this.readManifest(id);
      if (manifest === undefined) throw new CheckpointNotFoundError(id);
      if (options.toDirectory !== undefined) await mkdir(options.toDirectory, { recursive: true });
      const files = await mapLimit(selectFiles(manifest, options.only), TRANSFERS, (entry) =>
        this.loadFile(id, entry, options.toDirectory),
      );
      return { manifest, files };
    } catch (err) {
      throw storeError(`load ${checkpointLabel(id)}`, err);
    }
  }

  private async loadFile(id: CheckpointId, entry: ManifestFile, toDirectory?: string): Promise<LoadedFile> {
    const path = toDirectory === undefined ? undefined : resolve(toDirectory, entry.name);
    const { digest, bytes } = await downloadFile(this.target, this.keyOf(id, entry.key), path).catch((err: unknown) => {
      if (isNotFound(err)) verifyDigest(id, entry, { sha256: 'missing', sizeBytes: 0 });
      throw err;
    });
    verifyDigest(id, entry, digest);
    const where = bytes === undefined ? { path } : { bytes };
    return { name: entry.name, sizeBytes: entry.sizeBytes, sha256: entry.sha256, ...where };
  }

  /** Every key under `prefix`, following continuation tokens. */
  private async *keys(prefix: string): AsyncGenerator<string> {
    let token: string | undefined;
    do {
      const list = new ListObjectsV2Command({ Bucket: this.target.bucket, Prefix: prefix, ContinuationToken: token });
      const page = await this.target.client.send(list);
      for (const object of page.Contents ?? []) if (object.Key !== undefined) yield object.Key;
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
  }

  async list(runId: string): Promise<CheckpointInfo[]> {
    const base = `${this.prefix}${checkpointsPrefix(runId)}`;
    const found: CheckpointId[] = [];
    try {
      await this.ensureBucket();
      for await (const key of this.keys(base)) {
        const id = parseManifestPath(runId, key.slice(base.length));
        if (id !== undefined) found.push(id);
      }
    } catch (err) {
      throw storeError(`list ${runId}`, err);
    }
    found.sort((a, b) => (a.lineageId < b.lineageId ? -1 : a.lineageId > b.lineageId ? 1 : a.iteration - b.iteration));
    return found.map((id) => this.info(id));
  }

  async latest(runId: string, lineageId?: string): Promise<CheckpointInfo | undefined> {
    return latestOf(await this.list(runId), lineageId, async (c) => (await this.readManifest(c))!);
  }

  async delete(runId: string, lineageId: string, iteration: number): Promise<void> {
    const id = { runId, lineageId, iteration };
    const del = (Key: string) => this.target.client.send(new DeleteObjectCommand({ Bucket: this.target.bucket, Key }));
    try {
      await del(this.keyOf(id, MANIFEST_NAME)); // first: the checkpoint is gone before any file is
      const keys: string[] = [];
      for await (const key of this.keys(this.keyOf(id))) keys.push(key);
      await mapLimit(keys, TRANSFERS, del);
    } catch (err) {
      throw storeError(`delete ${checkpointLabel(id)}`, err);
    }
  }
}

/** The S3 checkpoint store (see the module comment). The bucket is created on first use if missing. */
export function createS3CheckpointStore(options: S3CheckpointStoreOptions): CheckpointStore {
  return new S3CheckpointStore(options);
}
