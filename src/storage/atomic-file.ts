/**
 * Crash-safe file writing: bytes go to a temporary file in the target's directory, are fsynced, and only then
 * renamed over the target (rename is atomic within a file system). A crash therefore leaves either the old
 * file or the complete new one, never a half-written file under the real name.
 */
import { randomBytes } from 'node:crypto';
import { link, open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Runs `write` against a temporary file handle, then fsyncs, closes and renames it to `path`, and fsyncs the
 * directory so the rename itself survives a power loss. On any error the temporary file is removed. With
 * `exclusive`, a `path` that exists is left alone and the call fails with EEXIST (the complete file is linked
 * under its name, which link refuses where rename would replace): a create-once file that a kill can never leave
 * empty, as one opened with 'wx' and then written can be.
 */
export async function writeFileAtomic(
  path: string,
  write: (fh: FileHandle) => Promise<void>,
  { exclusive = false } = {},
): Promise<void> {
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const fh = await open(tmp, 'wx');
  try {
    await write(fh);
    await fh.sync();
  } catch (err) {
    await fh.close().catch(() => undefined);
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  await fh.close();
  try {
    if (exclusive) await link(tmp, path);
    else await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  if (exclusive) await unlink(tmp);
  await syncDirectory(dirname(path));
}

/** Writes a whole string or byte array atomically (`exclusive`: see writeFileAtomic). */
export async function writeBytesAtomic(
  path: string,
  bytes: string | Uint8Array,
  options: { exclusive?: boolean } = {},
): Promise<void> {
  await writeFileAtomic(
    path,
    async (fh) => {
      await fh.writeFile(bytes);
    },
    options,
  );
}

/** Writes all of `bytes` at the handle's current position (FileHandle.write may write less than asked). */
export async function writeFully(fh: FileHandle, bytes: Uint8Array): Promise<void> {
  let done = 0;
  while (done < bytes.length) {
    const { bytesWritten } = await fh.write(bytes, done, bytes.length - done);
    done += bytesWritten;
  }
}

/** Reads exactly `length` bytes at `position` into a fresh buffer; returns fewer only at end of file. */
export async function readFully(fh: FileHandle, position: number, length: number): Promise<Uint8Array> {
  const out = new Uint8Array(length);
  let done = 0;
  while (done < length) {
    // One read call is capped at 2 GiB by Node; large tensors take several.
    const { bytesRead } = await fh.read(out, done, Math.min(length - done, 1 << 30), position + done);
    if (bytesRead === 0) return out.subarray(0, done);
    done += bytesRead;
  }
  return out;
}

async function syncDirectory(dir: string): Promise<void> {
  // Not every platform allows opening a directory for fsync; the rename has still happened.
  let fh: FileHandle | undefined;
  try {
    fh = await open(dir, 'r');
    await fh.sync();
  } catch {
    // best effort
  } finally {
    await fh?.close().catch(() => undefined);
  }
}
