/**
 * Checkpoints as local files: runs/<run>/checkpoints/<lineage>/<iteration>/. A save writes every file
 * and then the manifest into a hidden temp directory, fsyncs them, and renames the directory into
 * place: the checkpoint appears whole or not at all, and a crash leaves only a hidden temp dir.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { syncDirectory } from '../events/local-log.ts';
import { CorruptDataError } from '../errors.ts';
import { CheckpointConflictError, CheckpointNotFoundError, checkpointLabel } from './errors.ts';
import { DigestCounter, digestBytes, eachChunk, fileDigest, type ContentDigest } from './hash.ts';
import { writeFully } from './atomic-file.ts';
import { checkpointPrefix, checkpointsPrefix, iterationDir, MANIFEST_NAME, assertFileNames } from './layout.ts';
import { buildManifest, parseManifest, sameContent, selectFiles, serializeManifest, verifyDigest } from './manifest.ts';
import { latestOf, savedCheckpoint } from './store-common.ts';
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

export interface LocalCheckpointStoreOptions {
  /** Directory holding one folder per run (default "runs"). */
  root?: string;
}

async function writeDurably(path: string, bytes: Uint8Array): Promise<void> {
  const file = await open(path, 'wx');
  try {
    await file.writeFile(bytes);
    await file.sync();
  } finally {
    await file.close();
  }
}

/** Flushes a file written through a stream or moved into place to the disk. */
async function syncFile(path: string): Promise<void> {
  const file = await open(path, 'r+');
  await file.sync().finally(() => file.close());
}

/**
 * Copies `from` to `to` through one reused buffer, returning the digest of what was copied; `durable` fsyncs the copy
 * (a save's: a load's copy is scratch its reader uses at once, and a crash discards it).
 */
async function copyFile(from: string, to: string, durable: boolean): Promise<ContentDigest> {
  const counter = new DigestCounter();
  const target = await open(to, 'wx');
  try {
    await eachChunk(from, async (chunk) => {
      counter.update(chunk);
      await writeFully(target, chunk);
    });
    if (durable) await target.sync();
  } finally {
    await target.close();
  }
  return counter.digest();
}

/**
 * Moves `from` to `to` when both are on one filesystem, fsyncs it and returns its digest (`sha256` where the caller
 * knows it, else one read instead of a copy's read and write); false when they are not (EXDEV), leaving `from` where
 * it was.
 */
async function moveDurably(from: string, to: string, sha256?: string): Promise<ContentDigest | false> {
  try {
    await rename(from, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EXDEV') return false;
    throw err;
  }
  const digest = await fileDigest(to, sha256);
  await syncFile(to);
  return digest;
}

/** Writes through a file handle or a stream fail without a path (ENOSPC, EIO); name the file they were writing. */
function naming<T>(path: string, write: Promise<T>): Promise<T> {
  return write.catch((err: NodeJS.ErrnoException) => {
    if (err instanceof Error && typeof err.code === 'string' && err.path === undefined) err.path = path;
    throw err;
  });
}

async function writeInput(dir: string, input: CheckpointFileInput): Promise<ManifestFile> {
  const target = join(dir, input.name);
  if ('bytes' in input) {
    await naming(target, writeDurably(target, input.bytes));
    return { name: input.name, key: input.name, ...digestBytes(input.bytes) };
  }
  const moved = input.disposable === true && (await naming(target, moveDurably(input.path, target, input.sha256)));
  return {
    name: input.name,
    key: input.name,
    ...(moved || (await naming(target, copyFile(input.path, target, true)))),
  };
}

async function readManifestAt(dir: string, id: CheckpointId): Promise<CheckpointManifest | undefined> {
  const bytes = await readFile(join(dir, MANIFEST_NAME)).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return undefined;
    throw err;
  });
  return bytes === undefined ? undefined : parseManifest(bytes, id);
}

class LocalCheckpointStore implements CheckpointStore {
  constructor(private readonly root: string) {}

  private dirOf(id: CheckpointId): string {
    return join(this.root, checkpointPrefix(id));
  }

  private info(id: CheckpointId): CheckpointInfo {
    const uri = formatStorageUri({ scheme: 'file', path: `${this.dirOf(id)}` });
    return { ...id, uri, manifestUri: `${uri}${MANIFEST_NAME}` };
  }

  async save(
    runId: string,
    lineageId: string,
    iteration: number,
    files: readonly CheckpointFileInput[],
  ): Promise<SavedCheckpoint> {
    const id = { runId, lineageId, iteration };
    assertFileNames(files.map((f) => f.name));
    const final = this.dirOf(id);
    const temp = join(dirname(final), `.${iterationDir(iteration)}.tmp-${randomUUID()}`);
    await mkdir(temp, { recursive: true });
    try {
      const entries: ManifestFile[] = [];
      for (const input of files) entries.push(await writeInput(temp, input));
      const manifest = buildManifest(id, entries);
      const manifestPath = join(temp, MANIFEST_NAME);
      await naming(manifestPath, writeDurably(manifestPath, serializeManifest(manifest))); // last: the commit record
      await syncDirectory(temp);
      return await this.publish(id, temp, manifest);
    } finally {
      await rm(temp, { recursive: true, force: true });
    }
  }

  /** Renames the finished temp dir into place, unless a complete checkpoint is already there. */
  private async publish(id: CheckpointId, temp: string, manifest: CheckpointManifest): Promise<SavedCheckpoint> {
    const final = this.dirOf(id);
    const existing = await readManifestAt(final, id);
    if (existing !== undefined) return this.existing(id, existing, manifest);
    await this.clearLeftovers(id);
    try {
      await rename(temp, final);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
      return this.existing(id, (await readManifestAt(final, id))!, manifest); // a concurrent writer won
    }
    await syncDirectory(dirname(final));
    return this.saved(id, manifest);
  }

  private existing(id: CheckpointId, existing: CheckpointManifest, ours: CheckpointManifest): SavedCheckpoint {
    if (!sameContent(existing, ours)) throw new CheckpointConflictError(id, 'already saved with different content');
    return this.saved(id, existing);
  }

  private saved(id: CheckpointId, manifest: CheckpointManifest): SavedCheckpoint {
    const dir = this.dirOf(id);
    const uriOf = (f: ManifestFile): string => formatStorageUri({ scheme: 'file', path: join(dir, f.key) });
    return savedCheckpoint(this.info(id), manifest, uriOf);
  }

  async load(
    runId: string,
    lineageId: string,
    iteration: number,
    options: LoadOptions = {},
  ): Promise<LoadedCheckpoint> {
    const id = { runId, lineageId, iteration };
    const dir = this.dirOf(id);
    const manifest = await readManifestAt(dir, id);
    if (manifest === undefined) throw new CheckpointNotFoundError(id);
    const files: LoadedFile[] = [];
    for (const entry of selectFiles(manifest, options.only)) {
      files.push(await this.loadFile(id, dir, entry, options.toDirectory));
    }
    return { manifest, files };
  }

  private async loadFile(
    id: CheckpointId,
    dir: string,
    entry: ManifestFile,
    toDirectory?: string,
  ): Promise<LoadedFile> {
    const source = join(dir, entry.key);
    await stat(source).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
      throw new CorruptDataError(
        `checkpoint ${checkpointLabel(id)}: file ${entry.name} is listed in its manifest ` +
          `but missing from ${dir}; an earlier checkpoint k still resumes: starpo resume <run> --from-iteration k`,
        { details: { ...id, file: entry.name } },
      );
    });
    if (toDirectory === undefined) {
      const bytes = await readFile(source);
      verifyDigest(id, entry, digestBytes(bytes));
      return { name: entry.name, sizeBytes: entry.sizeBytes, sha256: entry.sha256, bytes };
    }
    await mkdir(toDirectory, { recursive: true });
    const path = resolve(toDirectory, entry.name);
    await rm(path, { force: true });
    try {
      verifyDigest(id, entry, await copyFile(source, path, false));
    } catch (err) {
      await rm(path, { force: true });
      throw err;
    }
    return { name: entry.name, sizeBytes: entry.sizeBytes, sha256: entry.sha256, path };
  }

  async list(runId: string): Promise<CheckpointInfo[]> {
    const base = join(this.root, checkpointsPrefix(runId));
    const found: CheckpointInfo[] = [];
    for (const lineageId of (await readdirOrEmpty(base)).filter((n) => !n.startsWith('.')).sort()) {
      for (const dir of (await readdirOrEmpty(join(base, lineageId))).filter((n) => /^\d{8}$/.test(n)).sort()) {
        const visible = await stat(join(base, lineageId, dir, MANIFEST_NAME)).then(
          () => true,
          () => false,
        );
        if (visible) found.push(this.info({ runId, lineageId, iteration: Number(dir) }));
      }
    }
    return found;
  }

  async latest(runId: string, lineageId?: string): Promise<CheckpointInfo | undefined> {
    return latestOf(await this.list(runId), lineageId, async (c) => (await readManifestAt(this.dirOf(c), c))!);
  }

  async delete(runId: string, lineageId: string, iteration: number): Promise<void> {
    await this.discard(this.dirOf({ runId, lineageId, iteration }));
  }

  /**
   * Removes what a crashed save left at the final path (files, no manifest). It is moved aside first
   * and inspected there, so a complete checkpoint another writer published meanwhile is put back.
   */
  private async clearLeftovers(id: CheckpointId): Promise<void> {
    const final = this.dirOf(id);
    const aside = await this.moveAside(final);
    if (aside === undefined) return;
    if ((await readManifestAt(aside, id)) !== undefined) await rename(aside, final);
    else await rm(aside, { recursive: true, force: true });
  }

  /** Renames a directory to a hidden trash name (it vanishes atomically); undefined when it did not exist. */
  private async moveAside(dir: string): Promise<string | undefined> {
    const trash = join(dirname(dir), `.trash-${randomUUID()}`);
    return rename(dir, trash).then(
      () => trash,
      (err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return undefined;
        throw err;
      },
    );
  }

  /** Renames a checkpoint dir aside (it vanishes atomically, manifest included), then removes it. */
  private async discard(dir: string): Promise<void> {
    const trash = await this.moveAside(dir);
    if (trash !== undefined) await rm(trash, { recursive: true, force: true });
  }
}

async function readdirOrEmpty(dir: string): Promise<string[]> {
  return readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    throw err;
  });
}

/** The local-files checkpoint store (see the module comment). */
export function createLocalCheckpointStore(options: LocalCheckpointStoreOptions = {}): CheckpointStore {
  return new LocalCheckpointStore(resolve(options.root ?? 'runs'));
}
