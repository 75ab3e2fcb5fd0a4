import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';

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

export async function digestFile(path: string): Promise<ContentDigest> {
  const counter = new DigestCounter();
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) counter.update(chunk as Buffer);
  return counter.digest();
}
