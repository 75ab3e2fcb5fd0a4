/**
 * The checkpoint store: a checkpoint is a set of named files saved under (run, lineage, iteration) and
 * made visible at once by writing its manifest last. Loading verifies every file against the
 * manifest's SHA-256, so a damaged checkpoint is refused rather than trained on.
 */

/** A file to save: its bytes in memory, or a path to stream it from (large weights). */
/**
 * A checkpoint file to save: bytes, or a file by path. `disposable`: the caller deletes the file afterwards, so a
 * store on the same filesystem may move it into place instead of copying it (the local store does).
 */
export type CheckpointFileInput =
  | { name: string; bytes: Uint8Array }
  | {
      name: string;
      path: string;
      disposable?: boolean;
      /** The file's SHA-256 (hex) as its writer computed it: the store then does not read the file to hash it. */
      sha256?: string;
    };

export interface CheckpointId {
  runId: string;
  lineageId: string;
  iteration: number;
}

export interface ManifestFile {
  name: string;
  /** Where the file lives, relative to the checkpoint's location. */
  key: string;
  sizeBytes: number;
  /** Lower-case hex SHA-256 of the content. */
  sha256: string;
}

export interface CheckpointManifest extends CheckpointId {
  format: 'starpo-checkpoint/1';
  /** ISO-8601 time the save finished writing the files. */
  createdAt: string;
  files: ManifestFile[];
}

/** A visible checkpoint's location (URIs as in uri.ts). */
export interface CheckpointInfo extends CheckpointId {
  uri: string;
  manifestUri: string;
}

/** What save returns; carries everything a CheckpointEvent needs. */
export interface SavedCheckpoint extends CheckpointInfo {
  manifest: CheckpointManifest;
  files: { name: string; uri: string; sha256: string; sizeBytes: number }[];
  totalBytes: number;
}

export interface LoadedFile {
  name: string;
  sizeBytes: number;
  sha256: string;
  /** The content, unless the load wrote it to `toDirectory`. */
  bytes?: Buffer;
  /** Where the load wrote it, when `toDirectory` was given. */
  path?: string;
}

export interface LoadedCheckpoint {
  manifest: CheckpointManifest;
  files: LoadedFile[];
}

export interface LoadOptions {
  /** Write the files into this directory (verified, not fsynced: a copy to read) instead of returning their bytes. */
  toDirectory?: string;
  /** Load only these file names (default: all). */
  only?: readonly string[];
}

export interface CheckpointStore {
  /**
   * Saves the files, then the manifest. Saving the same content again returns the existing checkpoint
   * (retries are idempotent); different content for an existing checkpoint is a CheckpointConflictError.
   */
  save(
    runId: string,
    lineageId: string,
    iteration: number,
    files: readonly CheckpointFileInput[],
  ): Promise<SavedCheckpoint>;
  /**
   * Loads and verifies: CheckpointNotFoundError when there is no manifest, CorruptDataError naming
   * the file when one fails its hash.
   */
  load(runId: string, lineageId: string, iteration: number, options?: LoadOptions): Promise<LoadedCheckpoint>;
  /** Visible checkpoints of the run (those with a manifest), ordered by lineage then iteration. */
  list(runId: string): Promise<CheckpointInfo[]>;
  /** Highest iteration of `lineageId`; without it, the checkpoint whose manifest was written last. */
  latest(runId: string, lineageId?: string): Promise<CheckpointInfo | undefined>;
  /** Removes a checkpoint; the manifest goes first so it is never half-visible. Missing is not an error. */
  delete(runId: string, lineageId: string, iteration: number): Promise<void>;
}
