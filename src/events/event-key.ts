/**
 * The identity of an event: (run, lineage, iteration, kind[, split, group, rollout]). Writers derive
 * it deterministically, so a retried activity produces the same key and replay can drop the copy.
 */
import type { EventKind, EventOfKind, StarpoEvent } from './types.ts';

type KeyParts<K extends EventKind> = (event: EventOfKind<K>) => readonly (string | number)[];

/** Per kind: the iteration the event belongs to and what distinguishes it within that iteration. */
const KEY_PARTS: { [K in EventKind]: KeyParts<K> } = {
  run: (e) => [e.fromIteration, 'run'],
  trajectory: (e) => [e.iteration, 'trajectory', e.split, e.group, e.rolloutIndex],
  iteration: (e) => [e.iteration, 'iteration'],
  checkpoint: (e) => [e.iteration, 'checkpoint'],
  'echo-trap': (e) => [e.iteration, 'echo-trap'],
};

/** "run/lineage/iteration/kind[/split/group/rollout]"; ids cannot contain '/' (see ids.ts). */
export function eventKey(event: StarpoEvent): string {
  const parts = (KEY_PARTS[event.kind] as KeyParts<EventKind>)(event as never);
  return [event.runId, event.lineageId, ...parts].join('/');
}

/** The iteration an event is filed under (a RunEvent: the iteration its lineage continues from). */
export function eventIteration(event: StarpoEvent): number {
  return event.kind === 'run' ? event.fromIteration : event.iteration;
}
