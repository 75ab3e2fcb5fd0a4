/**
 * manifest.json: the checkpoint's table of contents and its commit record. It is written last, so
 * its presence means every file it lists was fully written; each entry's SHA-256 is checked on load.
 */
import { CorruptDataError, StarpoError } from '../errors.ts';
import { checkpointLabel } from './errors.ts';
import type { ContentDigest } from './hash.ts';
import type { CheckpointId, CheckpointManifest, ManifestFile } from './types.ts';

export const MANIFEST_FORMAT = 'starpo-checkpoint/1';

export function buildManifest(id: CheckpointId, files: ManifestFile[], createdAt = new Date()): CheckpointManifest {
  return {
    format: MANIFEST_FORMAT,
    runId: id.runId,
    lineageId: id.lineageId,
    iteration: id.iteration,
    createdAt: createdAt.toISOString(),
    files,
  };
}

export function serializeManifest(manifest: CheckpointManifest): Buffer {
  return Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`);
}

function isManifestFile(f: unknown): f is ManifestFile {
  const e = f as ManifestFile;
  return (
    typeof e?.name === 'string' &&
    typeof e.key === 'string' &&
    Number.isSafeInteger(e.sizeBytes) &&
    typeof e.sha256 === 'string' &&
    /^[0-9a-f]{64}$/.test(e.sha256)
  );
}

/**
 * Parses and checks a stored manifest; CorruptDataError when it is not one, or belongs elsewhere. Its files
 * are named relative to the checkpoint, and its run id is the one it was written under: a run directory
 * copied or renamed is the run its location names, so only the lineage and iteration (its place within the
 * run) must match.
 */
export function parseManifest(bytes: Buffer, id: CheckpointId): CheckpointManifest {
  let value: CheckpointManifest;
  try {
    value = JSON.parse(bytes.toString('utf8')) as CheckpointManifest;
  } catch (cause) {
    throw new CorruptDataError(`checkpoint ${checkpointLabel(id)}: manifest is not JSON`, { cause });
  }
  const valid =
    value?.format === MANIFEST_FORMAT &&
    Array.isArray(value.files) &&
    value.files.every(isManifestFile) &&
    typeof value.runId === 'string' &&
    value.lineageId === id.lineageId &&
    value.iteration === id.iteration;
  if (!valid) {
    throw new CorruptDataError(`checkpoint ${checkpointLabel(id)}: manifest is malformed or names another checkpoint`);
  }
  return value;
}

/** Whether two manifests describe the same files (the time they were written aside). */
export function sameContent(a: CheckpointManifest, b: CheckpointManifest): boolean {
  const entry = (f: ManifestFile): string => `${f.name}:${f.sizeBytes}:${f.sha256}`;
  return a.files.map(entry).sort().join('\n') === b.files.map(entry).sort().join('\n');
}

/** Refuses content whose digest differs from its manifest entry, naming the file. */
export function verifyDigest(id: CheckpointId, entry: ManifestFile, actual: ContentDigest): void {
  if (actual.sha256 === entry.sha256 && actual.sizeBytes === entry.sizeBytes) return;
  throw new CorruptDataError(
    `checkpoint ${checkpointLabel(id)}: file ${entry.name} fails its integrity check ` +
      `(manifest: ${entry.sizeBytes} bytes, sha256 ${entry.sha256}; ` +
      `stored: ${actual.sizeBytes} bytes, sha256 ${actual.sha256})`,
    { details: { ...id, file: entry.name } },
  );
}

/** The manifest entries to load: all, or the requested names (an unknown name is an error). */
export function selectFiles(manifest: CheckpointManifest, only?: readonly string[]): ManifestFile[] {
  if (only === undefined) return manifest.files;
  return only.map((name) => {
    const entry = manifest.files.find((f) => f.name === name);
    if (entry === undefined) throw new StarpoError(`checkpoint ${checkpointLabel(manifest)} has no file ${name}`);
    return entry;
  });
}
