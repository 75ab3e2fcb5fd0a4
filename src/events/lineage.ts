/**
 * Which lineage's events survive. A run starts lineage L0; a resume from iteration k of lineage P
 * starts a new lineage whose events cover iterations after k. The newest lineage (last declared in the
 * log) is the survivor; following its parents gives a chain, and iteration i belongs to the newest
 * lineage in that chain that covers i. Everything else (abandoned branches, iterations a resume
 * rewound past) is superseded.
 */
import { CorruptDataError } from '../errors.ts';

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
