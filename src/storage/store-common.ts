/** Logic both checkpoint stores share: what save returns, and which checkpoint is the latest. */
import type { CheckpointInfo, CheckpointManifest, ManifestFile, SavedCheckpoint } from './types.ts';

export function savedCheckpoint(
  info: CheckpointInfo,
  manifest: CheckpointManifest,
  uriOf: (f: ManifestFile) => string,
): SavedCheckpoint {
  const files = manifest.files.map((f) => ({ name: f.name, uri: uriOf(f), sha256: f.sha256, sizeBytes: f.sizeBytes }));
  return { ...info, manifest, files, totalBytes: files.reduce((sum, f) => sum + f.sizeBytes, 0) };
}

/**
 * With a lineage: its highest iteration. Without: among each lineage's highest checkpoint, the one whose
 * manifest was written last (a resume's new lineage is newer than its parent's later iterations).
 */
export async function latestOf(
  checkpoints: readonly CheckpointInfo[],
  lineageId: string | undefined,
  manifestOf: (c: CheckpointInfo) => Promise<CheckpointManifest>,
): Promise<CheckpointInfo | undefined> {
  const heads = new Map<string, CheckpointInfo>();
  for (const c of checkpoints) {
    if (lineageId !== undefined && c.lineageId !== lineageId) continue;
    const head = heads.get(c.lineageId);
    if (head === undefined || c.iteration > head.iteration) heads.set(c.lineageId, c);
  }
  if (heads.size <= 1) return [...heads.values()][0];
  let best: { info: CheckpointInfo; at: string } | undefined;
  for (const info of heads.values()) {
    const at = (await manifestOf(info)).createdAt;
    const newer = best === undefined || at > best.at || (at === best.at && info.iteration > best.info.iteration);
    if (newer) best = { info, at };
  }
  return best?.info;
}
