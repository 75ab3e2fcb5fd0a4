/**
 * Where a resumed run starts and which lineage it writes. Pure decisions over the run's lineage starts
 * (its RunEvents) and its visible checkpoints, shared by the embedded driver, `starpo resume` and
 * `starpo eval`:
 * - continue: the surviving lineage goes on from the newest checkpoint its chain owns;
 * - fork: a NEW lineage starts from checkpoint k of the lineage that owns iteration k, so the old
 *   lineage's later events stay in the log and replay (src/events/lineage.ts) drops them;
 * - fork points: the checkpoints lineages started from, which retention must keep.
 */
import { ConfigError } from '../errors.ts';
import { chooseLineage, ownerOf, type LineagePlan, type LineageStart } from '../events/index.ts';
import type { EventReader } from '../events/index.ts';
import type { CheckpointId, CheckpointInfo, CheckpointStore } from '../storage/index.ts';

/** The lineage every run starts with (the embedded driver's and the durable driver's first lineage). */
export const ROOT_LINEAGE = 'main';

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
    starts.push({ lineageId: e.lineageId, parentLineageId: e.parentLineageId, fromIteration: e.fromIteration, forks: e.forks });
  }
  return starts;
}

/** The surviving chain; a log without RunEvents (older runs) is the root lineage alone. */
export function survivingPlan(starts: readonly LineageStart[]): LineagePlan {
  const root = { lineageId: ROOT_LINEAGE, parentLineageId: null, fromIteration: 0 };
  return chooseLineage(starts) ?? { survivor: ROOT_LINEAGE, chain: [root] };
}

/** Checkpoints whose iteration belongs to the surviving history (owned by their own lineage), oldest first. */
export function survivingCheckpoints<T extends CheckpointId>(plan: LineagePlan, checkpoints: readonly T[]): T[] {
  const inChain = (c: T) => plan.chain.some((l) => l.lineageId === c.lineageId);
  return checkpoints.filter((c) => inChain(c) && ownerOf(plan, c.iteration) === c.lineageId)
    .sort((a, b) => a.iteration - b.iteration);
}

export function forkPoints(runId: string, starts: readonly LineageStart[]): CheckpointId[] {
  return starts.flatMap((s) =>
    (s.parentLineageId === null ? [] : [{ runId, lineageId: s.parentLineageId, iteration: s.fromIteration }]));
}

const available = (cs: readonly CheckpointId[]): string =>
  cs.length === 0 ? 'none' : cs.map((c) => `${c.lineageId}@${c.iteration}`).join(', ');

/** Continue the surviving lineage from the newest checkpoint of its chain. */
export function continuePlan(
  runId: string, starts: readonly LineageStart[], checkpoints: readonly CheckpointInfo[],
): ResumePlan {
  const plan = survivingPlan(starts);
  const survivor = plan.chain[0];
  const from = survivingCheckpoints(plan, checkpoints).at(-1);
  if (!from) throw new ConfigError('resume', `run ${runId} has no checkpoint to resume from`);
  // Iterations up to the survivor's start belong to its parent: writing them under the survivor would hide them.
  if (from.iteration < survivor.fromIteration) {
    throw new ConfigError('resume', `lineage ${survivor.lineageId} starts after iteration ${survivor.fromIteration}, ` +
      `but the newest checkpoint of its chain is ${from.lineageId}@${from.iteration}`);
  }
  return {
    lineageId: survivor.lineageId, parentLineageId: survivor.parentLineageId,
    from: { runId, lineageId: from.lineageId, iteration: from.iteration }, forkPoints: forkPoints(runId, starts),
    forks: survivor.forks ?? 0,
  };
}

/** `r1`, `r2`, … : the first that no lineage (in the log or the store) already uses. */
export function nextLineageId(known: Iterable<string>): string {
  const used = new Set(known);
  let n = 1;
  while (used.has(`r${n}`)) n++;
  return `r${n}`;
}

/** Start a new lineage from checkpoint `k` of the surviving history. */
export function forkPlan(
  runId: string, starts: readonly LineageStart[], checkpoints: readonly CheckpointInfo[], k: number,
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
