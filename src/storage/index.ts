/**
 * The checkpoint store's public face: open a store from a URI (a registry by scheme, not a branch):
 *   file:///abs/path/runs   local files under that directory
 *   s3://bucket/prefix/     S3 keys under that prefix
 */
import { createLocalCheckpointStore } from './local-store.ts';
import { createS3CheckpointStore, type S3CheckpointStoreOptions } from './s3-store.ts';
import { parseStorageUri, type StorageLocation } from './uri.ts';
import type { CheckpointStore } from './types.ts';

export interface CheckpointStoreOptions {
  /** S3 settings other than bucket and prefix, which come from the URI. */
  s3?: Omit<S3CheckpointStoreOptions, 'bucket' | 'prefix'>;
}

type Scheme = StorageLocation['scheme'];
type Opener<S extends Scheme> = (
  location: Extract<StorageLocation, { scheme: S }>,
  options: CheckpointStoreOptions,
) => CheckpointStore;

/** A key prefix names a folder: "runs" and "runs/" both mean keys under runs/. */
const asFolder = (key: string): string => (key === '' || key.endsWith('/') ? key : `${key}/`);

const OPENERS: { [S in StorageLocation['scheme']]: Opener<S> } = {
  file: (location) => createLocalCheckpointStore({ root: location.path }),
  s3: (location, options) =>
    createS3CheckpointStore({ ...options.s3, bucket: location.bucket, prefix: asFolder(location.key) }),
};

export function createCheckpointStore(uri: string, options: CheckpointStoreOptions = {}): CheckpointStore {
  const location = parseStorageUri(uri);
  return (OPENERS[location.scheme] as Opener<Scheme>)(location as never, options);
}

export { createLocalCheckpointStore, createS3CheckpointStore };
export { applyRetention, planRetention, type RetentionPlan, type RetentionPolicy } from './retention.ts';
export { formatStorageUri, parseStorageUri, type StorageLocation } from './uri.ts';
export { CheckpointConflictError, CheckpointNotFoundError } from './errors.ts';
export type * from './types.ts';
