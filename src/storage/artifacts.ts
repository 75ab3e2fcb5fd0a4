/**
 * Per-iteration artifacts of the durable driver (trajectories, scored arrays, rewards, advantages,
 * update results) beside the checkpoints: `<prefix><run>/artifacts/<lineage>/<iteration>/<stage>/<part>`.
 * Keys are functions of (run, lineage, iteration, stage, shard) only, and every stage is deterministic,
 * so a retried activity rewrites the same bytes at the same key: retries are idempotent. Artifacts are
 * immutable once written, which makes an in-process cache safe (activities of one iteration often run
 * in the same worker).
 */
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { StarpoError } from '../errors.ts';
import { assertIteration, assertSafeId } from '../events/ids.ts';
import { iterationDir } from './layout.ts';
import { loopbackS3Client, retryableS3Failure } from './s3-store.ts';
import { parseStorageUri } from './uri.ts';
import { mapLimit } from './map-limit.ts';

export interface ArtifactStore {
  put(key: string, bytes: Uint8Array): Promise<void>;
  /** The bytes at `key`; a missing artifact is a (non-retryable) StarpoError naming the key. */
  get(key: string): Promise<Buffer>;
  has(key: string): Promise<boolean>;
  /** Deletes every artifact under the key prefix (an iteration's folder). */
  deletePrefix(prefix: string): Promise<void>;
  /**
   * The keys of the artifacts directly in a folder (`folder` ends with '/'), sorted; with `deep`, those in its
   * sub-folders too.
   */
  keys(folder: string, deep?: boolean): Promise<string[]>;
}

export interface ArtifactId {
  runId: string;
  lineageId: string;
  iteration: number;
}

/** "<run>/artifacts/<lineage>/<iteration>/" */
export function iterationArtifacts(id: ArtifactId): string {
  assertSafeId('runId', id.runId);
  assertSafeId('lineageId', id.lineageId);
  assertIteration(id.iteration);
  return `${id.runId}/artifacts/${id.lineageId}/${iterationDir(id.iteration)}/`;
}

export function artifactKey(id: ArtifactId, stage: string, part: string): string {
  return `${iterationArtifacts(id)}${stage}/${part}`;
}

/** The run's config, written once when the run starts. */
export const configKey = (runId: string): string => `${runId}/config.json`;
/** Where startRun saves the lineages' starts (parent, checkpoint it continues from, forks): one JSON per lineage. */
export const lineagesFolder = (runId: string): string => `${runId}/lineages/`;
export const lineageKey = (runId: string, lineageId: string): string => `${lineagesFolder(runId)}${lineageId}.json`;

type SdkError = Error & { $metadata?: { httpStatusCode?: number } };
const isNotFound = (err: unknown): boolean =>
  (err as SdkError).$metadata?.httpStatusCode === 404 ||
  ['NoSuchKey', 'NotFound', 'NoSuchBucket'].includes((err as Error).name);

function failure(op: string, key: string, cause: unknown): StarpoError {
  if (cause instanceof StarpoError) return cause;
  const status = (cause as SdkError).$metadata?.httpStatusCode;
  return new StarpoError(`artifact store: ${op} ${key} failed: ${(cause as Error).message}`, {
    cause,
    retryable: retryableS3Failure(cause),
    details: { op, key, status },
  });
}

const missing = (key: string): StarpoError => new StarpoError(`artifact ${key} does not exist`, { details: { key } });

class S3Artifacts implements ArtifactStore {
  private bucketReady: Promise<unknown> | undefined;
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    private readonly prefix: string,
  ) {}

  private ensureBucket(): Promise<unknown> {
    const create = (err: unknown) => {
      if (!isNotFound(err)) throw err;
      return this.client.send(new CreateBucketCommand({ Bucket: this.bucket })).catch((e: Error) => {
        if (e.name !== 'BucketAlreadyOwnedByYou') throw e;
      });
    };
    this.bucketReady ??= this.client.send(new HeadBucketCommand({ Bucket: this.bucket })).catch(create);
    this.bucketReady.catch(() => (this.bucketReady = undefined));
    return this.bucketReady;
  }

  async put(key: string, bytes: Uint8Array): Promise<void> {
    try {
      await this.ensureBucket();
      await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: this.prefix + key, Body: bytes }));
    } catch (err) {
      throw failure('put', key, err);
    }
  }

  async get(key: string): Promise<Buffer> {
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.prefix + key }));
      return Buffer.from(await out.Body!.transformToByteArray());
    } catch (err) {
      throw isNotFound(err) ? missing(key) : failure('get', key, err);
    }
  }

  async has(key: string): Promise<boolean> {
    return this.get(key).then(
      () => true,
      (err: StarpoError) => (err.retryable ? Promise.reject(err) : false),
    );
  }

  /** Object keys under `prefix` (the store's prefix included), a page at a time; `delimiter` leaves out sub-folders. */
  private async *pages(prefix: string, delimiter?: string): AsyncGenerator<string[]> {
    let token: string | undefined;
    do {
      const list = new ListObjectsV2Command({
        Bucket: this.bucket,
        Prefix: this.prefix + prefix,
        Delimiter: delimiter,
        ContinuationToken: token,
      });
      const page = await this.client.send(list);
      yield (page.Contents ?? []).map((o) => o.Key!);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
  }

  async deletePrefix(prefix: string): Promise<void> {
    try {
      for await (const keys of this.pages(prefix)) {
        await mapLimit(keys, 6, (key) => this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key })));
      }
    } catch (err) {
      throw failure('delete', prefix, err);
    }
  }

  async keys(folder: string, deep = false): Promise<string[]> {
    const out: string[] = [];
    try {
      for await (const keys of this.pages(folder, deep ? undefined : '/')) {
        out.push(...keys.map((k) => k.slice(this.prefix.length)));
      }
    } catch (err) {
      if (isNotFound(err)) return [];
      throw failure('list', folder, err);
    }
    return out.sort();
  }
}

class FileArtifacts implements ArtifactStore {
  constructor(private readonly root: string) {}

  async put(key: string, bytes: Uint8Array): Promise<void> {
    const path = join(this.root, key);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(`${path}.tmp`, bytes);
    await rename(`${path}.tmp`, path); // readers never see half an artifact
  }

  async get(key: string): Promise<Buffer> {
    return readFile(join(this.root, key)).catch((err: NodeJS.ErrnoException) => {
      throw err.code === 'ENOENT' ? missing(key) : failure('get', key, err);
    });
  }

  async has(key: string): Promise<boolean> {
    return this.get(key).then(
      () => true,
      () => false,
    );
  }

  async deletePrefix(prefix: string): Promise<void> {
    await rm(join(this.root, prefix), { recursive: true, force: true });
  }

  async keys(folder: string, deep = false): Promise<string[]> {
    const dir = join(this.root, folder);
    const entries = await readdir(dir, { withFileTypes: true, recursive: deep }).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return [];
      throw failure('list', folder, err);
    });
    // A `.tmp` is a put still being written (or one a crash left behind): not an artifact.
    return entries
      .filter((e) => e.isFile() && !e.name.endsWith('.tmp'))
      .map((e) => folder + relative(dir, join(e.parentPath, e.name)).split(sep).join('/'))
      .sort();
  }
}

/** Keeps recently written or read artifacts in memory, up to a byte budget (oldest dropped first). */
class CachedArtifacts implements ArtifactStore {
  private readonly cache = new Map<string, Buffer>();
  private bytes = 0;
  constructor(
    private readonly inner: ArtifactStore,
    private readonly budget: number,
  ) {}

  private remember(key: string, value: Buffer): void {
    this.forget(key);
    this.cache.set(key, value);
    this.bytes += value.length;
    for (const [k, v] of this.cache) {
      if (this.bytes <= this.budget) break;
      this.cache.delete(k);
      this.bytes -= v.length;
    }
  }

  private forget(key: string): void {
    const old = this.cache.get(key);
    if (old) this.bytes -= old.length;
    this.cache.delete(key);
  }

  async put(key: string, bytes: Uint8Array): Promise<void> {
    await this.inner.put(key, bytes);
    this.remember(key, Buffer.from(bytes));
  }

  async get(key: string): Promise<Buffer> {
    const hit = this.cache.get(key);
    if (hit) return hit;
    const value = await this.inner.get(key);
    this.remember(key, value);
    return value;
  }

  async has(key: string): Promise<boolean> {
    return this.cache.has(key) || this.inner.has(key);
  }

  async deletePrefix(prefix: string): Promise<void> {
    for (const key of [...this.cache.keys()]) if (key.startsWith(prefix)) this.forget(key);
    await this.inner.deletePrefix(prefix);
  }

  keys(folder: string, deep = false): Promise<string[]> {
    return this.inner.keys(folder, deep);
  }
}

/** Artifacts under the same location as the run's checkpoints (`s3://bucket/prefix/` or `file:///dir`). */
export function createArtifactStore(storeUri: string, cacheBytes = 256 * 1024 * 1024): ArtifactStore {
  const location = parseStorageUri(storeUri);
  const inner =
    location.scheme === 's3'
      ? new S3Artifacts(
          loopbackS3Client(),
          location.bucket,
          location.key === '' || location.key.endsWith('/') ? location.key : `${location.key}/`,
        )
      : new FileArtifacts(location.path);
  return new CachedArtifacts(inner, cacheBytes);
}
