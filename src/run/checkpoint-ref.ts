/**
 * "<run-dir>[@iteration]" references to a run's checkpoint: parsed, and resolved against the run's
 * surviving history (the newest checkpoint, or the named iteration's in the lineage that owns it).
 */
import { ConfigError } from '../errors.ts';
import { ownerOf, survivingPlan } from '../events/lineage.ts';
import type { EventReader } from '../events/types.ts';
import type { CheckpointId, CheckpointInfo } from '../storage/index.ts';
import { continuePlan, readLineageStarts } from './resume-plan.ts';
import { localRunEvents, runLocation, type RunLocation } from './location.ts';

export function parseCheckpointRef(ref: string, runsDir = 'runs'): RunLocation & { iteration?: number } {
  const at = ref.lastIndexOf('@');
  if (at < 0) return runLocation(ref, runsDir);
  const text = ref.slice(at + 1);
  const iteration = Number(text);
  if (!/^\d+$/.test(text)) {
    throw new ConfigError('--checkpoint', `"${ref}": the part after @ must be an iteration number`);
  }
  return { ...runLocation(ref.slice(0, at), runsDir), iteration };
}

/** The checkpoint `iteration` of the surviving history (as the run's events tell it), or its newest one. */
export async function chooseCheckpoint(
  loc: RunLocation,
  checkpoints: readonly CheckpointInfo[],
  iteration?: number,
  reader: EventReader = localRunEvents(loc.root),
): Promise<CheckpointId> {
  const starts = await readLineageStarts(reader, loc.runId).finally(() => reader.close());
  if (iteration === undefined) return continuePlan(loc.runId, starts, checkpoints).from;
  const lineageId = ownerOf(survivingPlan(starts), iteration);
  if (!checkpoints.some((c) => c.lineageId === lineageId && c.iteration === iteration)) {
    const have = checkpoints.map((c) => `${c.lineageId}@${c.iteration}`).join(', ') || 'none';
    const why = `run ${loc.runId} has no checkpoint ${lineageId}@${iteration}; available: ${have}`;
    throw new ConfigError('--checkpoint', why);
  }
  return { runId: loc.runId, lineageId, iteration };
}
