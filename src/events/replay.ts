/**
 * Replay: a run's events as if every write had happened exactly once on the surviving lineage.
 * Duplicates (same event key, e.g. from a retried activity) keep the first copy, which is the one the
 * log made durable first; superseded lineages are dropped (see lineage.ts). Works over any EventReader.
 */
import { eventIteration, eventKey } from './event-key.ts';
import { chooseLineage, inChain, ownerOf, type LineagePlan, type LineageStart } from './lineage.ts';
import type { EventReader, ReadOptions, RunEvent, StarpoEvent } from './types.ts';

export type DropReason = 'duplicate' | 'superseded';

export interface ReplayOptions extends ReadOptions {
  /** Called for each event replay leaves out, with the reason. */
  onDropped?: (event: StarpoEvent, reason: DropReason) => void;
}

function lineageStart(event: RunEvent): LineageStart {
  return { lineageId: event.lineageId, parentLineageId: event.parentLineageId, fromIteration: event.fromIteration };
}

/** Decides event by event, in log order, whether replay keeps it. */
export class ReplayFilter {
  private readonly seen = new Set<string>();
  constructor(private readonly plan: LineagePlan | undefined) {}

  /** Builds the plan from the run's RunEvents, in log order. */
  static fromRunEvents(runEvents: readonly RunEvent[]): ReplayFilter {
    return new ReplayFilter(chooseLineage(runEvents.map(lineageStart)));
  }

  verdict(event: StarpoEvent): DropReason | 'keep' {
    if (this.plan !== undefined && !this.survives(this.plan, event)) return 'superseded';
    const key = eventKey(event);
    if (this.seen.has(key)) return 'duplicate';
    this.seen.add(key);
    return 'keep';
  }

  private survives(plan: LineagePlan, event: StarpoEvent): boolean {
    if (event.kind === 'run') return inChain(plan, event.lineageId);
    return ownerOf(plan, eventIteration(event)) === event.lineageId;
  }
}

/** Replay over an in-memory list (pure). A log without RunEvents is only deduplicated. */
export function replayEvents(events: readonly StarpoEvent[], onDropped?: ReplayOptions['onDropped']): StarpoEvent[] {
  const filter = ReplayFilter.fromRunEvents(events.filter((e): e is RunEvent => e.kind === 'run'));
  return events.filter((event) => {
    const verdict = filter.verdict(event);
    if (verdict !== 'keep') onDropped?.(event, verdict);
    return verdict === 'keep';
  });
}

/**
 * Replay straight from a reader, in two passes so memory stays flat: the first collects the RunEvents
 * (the lineage tree), the second streams the surviving events. Read problems are reported once (second pass);
 * damage fails the first pass, before anything is yielded, unless `allowPartial` (then both read the intact prefix).
 */
export async function* replay(
  reader: EventReader,
  runId: string,
  options: ReplayOptions = {},
): AsyncGenerator<StarpoEvent> {
  const runEvents: RunEvent[] = [];
  const { allowPartial } = options;
  for await (const event of reader.read(runId, { onProblem: () => undefined, allowPartial })) {
    if (event.kind === 'run') runEvents.push(event);
  }
  const filter = ReplayFilter.fromRunEvents(runEvents);
  for await (const event of reader.read(runId, { onProblem: options.onProblem, allowPartial })) {
    const verdict = filter.verdict(event);
    if (verdict === 'keep') yield event;
    else options.onDropped?.(event, verdict);
  }
}
