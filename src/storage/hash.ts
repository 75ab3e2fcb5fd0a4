import { createHash, type Hash } from 'node:crypto';
import { open, stat } from 'node:fs/promises';

export interface ContentDigest {
  sha256: string;
  sizeBytes: number;
}

/** SHA-256 and byte count of content seen in chunks (uploads, downloads, copies). */
export class DigestCounter {
  private readonly hash: Hash = createHash('sha256');
  private size = 0;

  update(chunk: Uint8Array): void {
    this.hash.update(chunk);
    this.size += chunk.length;
  }

  digest(): ContentDigest {
    return { sha256: this.hash.digest('hex'), sizeBytes: this.size };
  }
}

export function digestBytes(bytes: Uint8Array): ContentDigest {
  const counter = new DigestCounter();
  counter.update(bytes);
  return counter.digest();
}

/** Bytes read per call when hashing or copying a file. */
const FILE_CHUNK_BYTES = 4 << 20;

/**
 * Reads the file at `path` from start to end through one reused buffer, handing each chunk to `use` (valid until it
 * returns): a stream's fresh chunk per megabyte made V8 collect garbage every ~100 ms (a 1.6 GB checkpoint spent a
 * third of its hashing in the collector).
 */
export async function eachChunk(path: string, use: (chunk: Buffer) => void | Promise<void>): Promise<void> {
  const fh = await open(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(FILE_CHUNK_BYTES);
    for (;;) {
      const { bytesRead } = await fh.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      await use(buffer.subarray(0, bytesRead));
    }
  } finally {
    await fh.close();
  }
}

/** SHA-256 and size of a file. */
export async function digestFile(path: string): Promise<ContentDigest> {
  const counter = new DigestCounter();
  await eachChunk(path, (chunk) => counter.update(chunk));
  return counter.digest();
}

/** A file's digest where its writer already knows its SHA-256 (only its size is read), else digestFile's. */
export async function fileDigest(path: string, sha256?: string): Promise<ContentDigest> {
  return sha256 === undefined ? digestFile(path) : { sha256, sizeBytes: (await stat(path)).size };
}

/** Hex SHA-256 of a file (digestFile's hash alone). */
export async function sha256File(path: string): Promise<string> {
  return (await digestFile(path)).sha256;
}
