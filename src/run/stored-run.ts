/**
 * A durable run as its store keeps it: the sealed copy of its events (written by the publish activity,
 * src/durable/seal-events.ts) and the config the durable client saved, for `replay|report|eval --source s3`.
 */
import { createSealedEventReader } from '../events/sealed-log.ts';
import type { EventReader } from '../events/types.ts';
import { configKey, createArtifactStore } from '../storage/artifacts.ts';

/** A reader over the sealed segments of the runs in a store (`s3://bucket/prefix/` or `file:///dir`). */
export function createSealedRunReader(storeUri: string): EventReader {
  return createSealedEventReader(createArtifactStore(storeUri), storeUri);
}

/** A run's config.json as the durable client saved it in the store; undefined when there is none. */
export async function sealedRunConfig(storeUri: string, runId: string): Promise<string | undefined> {
  const artifacts = createArtifactStore(storeUri);
  const key = configKey(runId);
  return (await artifacts.has(key)) ? (await artifacts.get(key)).toString('utf8') : undefined;
}
