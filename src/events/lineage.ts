/**
 * Lineages, the one home of the concept: their ids, and which lineage's events and checkpoints survive.
 * A run starts lineage ROOT_LINEAGE; a resume or a fork from iteration k of lineage P starts a new
 * lineage whose events cover iterations after k. The newest lineage (last declared in the log) is the
 * survivor; following its parents gives a chain, and iteration i belongs to the newest lineage in that
 * chain that covers i. Everything else (abandoned branches, iterations a resume rewound past) is
 * superseded. Pure and free of Node built-ins: the workflow code imports it.
 * Resume plans over these decisions (reading the log and the store) are in src/run/resume-plan.ts.
 */
import { CorruptDataError } from '../errors.ts';

/** The lineage every run starts with, in both drivers. */
export const ROOT_LINEAGE = 'main';

/**
 * Lineage ids, one scheme per way a lineage starts:
 * - `main`: the first (ROOT_LINEAGE);
 * - `r1`, `r2`, …: a resume or `--from-iteration` fork that read the whole log (embedded driver, `starpo
 *   resume`): the first `rN` that no lineage of the log or the store already uses;
 * - `f<forks>-<iteration>`: a fork onCollapse=fork takes, from the fork count and the checkpoint it starts
 *   from; unique per run and derived from the run's own state, so a replayed workflow computes it again;
 * - `r<iteration>-<6 hex>`: a durable resume, started by a client that reads the checkpoints but not the
 *   event log (where a lineage without a checkpoint yet is declared), so it cannot know which `rN` is free:
 *   a random suffix (the caller's) keeps two resumes from one iteration apart.
 */
export function nextLineageId(known: Iterable<string>): string {
  const used = new Set(known);
  let n = 1;
  while (used.has(`r${n}`)) n++;
  return `r${n}`;
}

export const forkLineageId = (forks: number, fromIteration: number): string => `f${forks}-${fromIteration}`;

/** `suffix`: 6 random hex digits the caller draws (this module stays deterministic). */
export const durableResumeLineageId = (fromIteration: number, suffix: string): string => `r${fromIteration}-${suffix}`;

export interface LineageStart {
  lineageId: string;
  parentLineageId: string | null;
  /** Checkpoint iteration the lineage continues from; it covers the iterations after it. */
  fromIteration: number;
  /** onCollapse=fork forks behind the lineage (its RunEvent's; absent = 0). */
  forks?: number;
}

export interface LineagePlan {
  survivor: string;
  /** The survivor first, then its parent, and so on to the root. */
  chain: readonly LineageStart[];
}

/** The surviving chain for lineage starts in log order; undefined when the log declares none. */
export function chooseLineage(starts: readonly LineageStart[]): LineagePlan | undefined {
  const byId = new Map<string, LineageStart>();
  for (const start of starts) if (!byId.has(start.lineageId)) byId.set(start.lineageId, start);
  // Newest = declared last; a late duplicate of an old lineage's start does not make it newer.
  const survivor = [...byId.keys()].at(-1);
  if (survivor === undefined) return undefined;
  const chain: LineageStart[] = [];
  for (let id: string | null = survivor; id !== null;) {
    if (chain.some((l) => l.lineageId === id)) throw new CorruptDataError(`lineage cycle through ${id}`);
    // A parent whose start was never logged (e.g. lost to retention) still owns the iterations before its child.
    const start: LineageStart = byId.get(id) ?? { lineageId: id, parentLineageId: null, fromIteration: 0 };
    chain.push(start);
    id = start.parentLineageId;
  }
  return { survivor, chain };
}

/** The lineage whose events for `iteration` survive: the newest in the chain covering it (the root covers all). */
export function ownerOf(plan: LineagePlan, iteration: number): string {
  const owner = plan.chain.find((l, i) => i === plan.chain.length - 1 || iteration > l.fromIteration);
  return owner!.lineageId;
}

/** Whether a lineage's start (its RunEvent) is part of the surviving history. */
export function inChain(plan: LineagePlan, lineageId: string): boolean {
  return plan.chain.some((l) => l.lineageId === lineageId);
}

/** The surviving chain; a log without RunEvents (older runs) is the root lineage alone. */
export function survivingPlan(starts: readonly LineageStart[]): LineagePlan {
  const root = { lineageId: ROOT_LINEAGE, parentLineageId: null, fromIteration: 0 };
  return chooseLineage(starts) ?? { survivor: ROOT_LINEAGE, chain: [root] };
}

/** Checkpoints whose iteration belongs to the surviving history (owned by their own lineage), oldest first. */
export function survivingCheckpoints<T extends { lineageId: string; iteration: number }>(
  plan: LineagePlan,
  checkpoints: readonly T[],
): T[] {
  return checkpoints
    .filter((c) => inChain(plan, c.lineageId) && ownerOf(plan, c.iteration) === c.lineageId)
    .sort((a, b) => a.iteration - b.iteration);
}

/** The checkpoints lineages started from (retention must keep them). */
export function forkPoints(
  runId: string,
  starts: readonly LineageStart[],
): {
  runId: string;
  lineageId: string;
  iteration: number;
}[] {
  return starts.flatMap((s) =>
    s.parentLineageId === null ? [] : [{ runId, lineageId: s.parentLineageId, iteration: s.fromIteration }],
  );
}
