/**
 * Where a checkpoint lives, derived only from (run, lineage, iteration), so a retried save writes the
 * same place: <run>/checkpoints/<lineage>/<iteration, 8 digits>/ under the store's root (local: the
 * runs/ directory; S3: the "runs/" key prefix). Zero padding makes the lexical order of S3 listings
 * and directory listings the numeric order.
 */
import { assertIteration, assertSafeId } from '../events/ids.ts';
import { StarpoError } from '../errors.ts';
import type { CheckpointId } from './types.ts';

export const MANIFEST_NAME = 'manifest.json';
const ITERATION_DIGITS = 8;
const FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

export function checkpointsPrefix(runId: string): string {
  assertSafeId('runId', runId);
  return `${runId}/checkpoints/`;
}

export function iterationDir(iteration: number): string {
  assertIteration(iteration);
  return String(iteration).padStart(ITERATION_DIGITS, '0');
}

/** "<run>/checkpoints/<lineage>/<iteration>/" */
export function checkpointPrefix(id: CheckpointId): string {
  assertSafeId('lineageId', id.lineageId);
  return `${checkpointsPrefix(id.runId)}${id.lineageId}/${iterationDir(id.iteration)}/`;
}

/** The (lineage, iteration) of a manifest path relative to checkpointsPrefix, or undefined for anything else. */
export function parseManifestPath(runId: string, relative: string): CheckpointId | undefined {
  const match = /^([^/]+)\/(\d{8})\/manifest\.json$/.exec(relative);
  return match === null ? undefined : { runId, lineageId: match[1], iteration: Number(match[2]) };
}

/** File names are flat and portable; the manifest's own name is reserved. */
export function assertFileNames(names: readonly string[]): void {
  const seen = new Set<string>();
  for (const name of names) {
    if (!FILE_NAME.test(name) || name === MANIFEST_NAME || seen.has(name)) {
      const why = `checkpoint file name ${JSON.stringify(name)} is invalid, reserved or repeated`;
      throw new StarpoError(why, { details: { name } });
    }
    seen.add(name);
  }
}
