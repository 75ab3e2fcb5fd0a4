/**
 * What the lib directory holds, written by the installer after each step: which wheel (by sha256) each
 * library came from, and the onnxruntime-node version the install was made for. Reruns skip what the
 * manifest and the files agree on; doctor reads the version to spot an install for another release.
 */
import { existsSync, readFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface Manifest {
  ortVersion: string;
  withCudnn: boolean;
  /** File name under lib/ or tools/ → sha256 of the wheel it was unpacked from. */
  files: Record<string, string>;
}

export const manifestPath = (lib: string): string => join(lib, 'manifest.json');

export function readManifest(lib: string): Manifest | null {
  const path = manifestPath(lib);
  if (!existsSync(path)) return null;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Manifest;
  } catch {
    return null; // damaged: the installer unpacks everything again
  }
}

export async function writeManifest(lib: string, m: Manifest): Promise<void> {
  const path = manifestPath(lib);
  await writeFile(`${path}.partial`, `${JSON.stringify(m, null, 2)}\n`);
  await rename(`${path}.partial`, path);
}
