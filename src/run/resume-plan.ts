/**
 * Where a resumed run starts and which lineage it writes: plans over the run's lineage starts (its
 * RunEvents) and its visible checkpoints, made with the lineage decisions of src/events/lineage.ts and
 * shared by the embedded driver, `starpo resume` and `starpo eval`:
 * - continue: the surviving lineage goes on from the newest checkpoint its chain owns;
 * - fork: a NEW lineage starts from checkpoint k of the lineage that owns iteration k, so the old
 *   lineage's later events stay in the log and replay (src/events/lineage.ts) drops them;
 * - fork points: the checkpoints lineages started from, which retention must keep.
 */
import { ConfigError } from '../errors.ts';
import type { EventReader } from '../events/index.ts';
import {
  ROOT_LINEAGE,
  forkPoints,
  nextLineageId,
  ownerOf,
  survivingCheckpoints,
  survivingPlan,
  type LineageStart,
} from '../events/lineage.ts';
import type { CheckpointId, CheckpointInfo, CheckpointStore } from '../storage/index.ts';

export interface ResumePlan {
  /** Lineage the resumed run writes its iterations and checkpoints under. */
  lineageId: string;
  /** Its parent (null for the root); written into the RunEvent. */
  parentLineageId: string | null;
  /** The checkpoint to load; the run continues with iteration `from.iteration + 1`. */
  from: CheckpointId;
  /** Checkpoints some lineage started from: retention must not delete them. */
  forkPoints: CheckpointId[];
  /** onCollapse=fork forks behind the lineage: the survivor's for a continue, the owner's for a fork. */
  forks: number;
}

/** The run's lineage starts (one per RunEvent, in log order); damaged records are skipped quietly here. */
export async function readLineageStarts(reader: EventReader, runId: string): Promise<LineageStart[]> {
  const starts: LineageStart[] = [];
  for await (const e of reader.read(runId, { onProblem: () => undefined })) {
    if (e.kind !== 'run') continue;
    starts.push({
      lineageId: e.lineageId,
      parentLineageId: e.parentLineageId,
      fromIteration: e.fromIteration,
      forks: e.forks,
    });
  }
  return starts;
}

const available = (cs: readonly CheckpointId[]): string =>
  cs.length === 0 ? 'none' : cs.map((c) => `${c.lineageId}@${c.iteration}`).join(', ');

/** Continue the surviving lineage from the newest checkpoint of its chain. */
export function continuePlan(
  runId: string,
  starts: readonly LineageStart[],
  checkpoints: readonly CheckpointInfo[],
): ResumePlan {
  const plan = survivingPlan(starts);
  const survivor = plan.chain[0];
  const from = survivingCheckpoints(plan, checkpoints).at(-1);
  if (!from) throw new ConfigError('resume', `run ${runId} has no checkpoint to resume from`);
  // Iterations up to the survivor's start belong to its parent: writing them under the survivor would hide them.
  if (from.iteration < survivor.fromIteration) {
    throw new ConfigError(
      'resume',
      `lineage ${survivor.lineageId} starts after iteration ${survivor.fromIteration}, ` +
        `but the newest checkpoint of its chain is ${from.lineageId}@${from.iteration}`,
    );
  }
  return {
    lineageId: survivor.lineageId,
    parentLineageId: survivor.parentLineageId,
    from: { runId, lineageId: from.lineageId, iteration: from.iteration },
    forkPoints: forkPoints(runId, starts),
    forks: survivor.forks ?? 0,
  };
}

/** Start a new lineage from checkpoint `k` of the surviving history. */
export function forkPlan(
  runId: string,
  starts: readonly LineageStart[],
  checkpoints: readonly CheckpointInfo[],
  k: number,
): ResumePlan {
  const plan = survivingPlan(starts);
  const owner = ownerOf(plan, k);
  const from = checkpoints.find((c) => c.lineageId === owner && c.iteration === k);
  if (!from) {
    const have = available(survivingCheckpoints(plan, checkpoints));
    throw new ConfigError('--from-iteration', `run ${runId} has no checkpoint ${owner}@${k}; available: ${have}`);
  }
  const lineageId = nextLineageId([ROOT_LINEAGE, ...[...starts, ...checkpoints].map((x) => x.lineageId)]);
  const start: CheckpointId = { runId, lineageId: owner, iteration: k };
  const forks = plan.chain.find((l) => l.lineageId === owner)?.forks ?? 0;
  return { lineageId, parentLineageId: owner, from: start, forkPoints: [...forkPoints(runId, starts), start], forks };
}

/**
 * A view of the store for retention: `list` leaves out the fork points, so a retention policy never
 * sees (and never deletes) the checkpoint a lineage started from. Everything else passes through.
 */
export function withoutForkPoints(store: CheckpointStore, protect: readonly CheckpointId[]): CheckpointStore {
  const key = (c: CheckpointId) => `${c.lineageId}/${c.iteration}`;
  const hidden = new Set(protect.map(key));
  return {
    save: (...args) => store.save(...args),
    load: (...args) => store.load(...args),
    latest: (...args) => store.latest(...args),
    delete: (...args) => store.delete(...args),
    list: async (runId) => (await store.list(runId)).filter((c) => !hidden.has(key(c))),
  };
}

/**
 * The lineage a durable resume continues from when its caller names none: of the lineages with a
 * checkpoint at `iteration`, the one whose manifest was written last (the live branch). The durable
 * client sees the store but not the event log, so it cannot ask forkPlan, which reads the log's chain.
 */
export async function latestLineageAt(store: CheckpointStore, runId: string, iteration: number): Promise<string> {
  const all = await store.list(runId);
  const here = all.filter((c) => c.iteration === iteration);
  if (here.length === 0) {
    const kept = [...new Set(all.map((c) => c.iteration))].sort((a, b) => a - b).join(', ') || 'none';
    throw new ConfigError('fromIteration', `run ${runId} has no checkpoint at iteration ${iteration} (kept: ${kept})`);
  }
  let best = { lineageId: here[0].lineageId, at: '' };
  for (const c of here) {
    const { manifest } = await store.load(runId, c.lineageId, iteration, { only: [] });
    if (manifest.createdAt > best.at) best = { lineageId: c.lineageId, at: manifest.createdAt };
  }
  return best.lineageId;
}
