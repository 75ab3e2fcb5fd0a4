/**
 * A finished run's iterations with the model FLOPs of their stages (iteration-flops.ts), read from the run's local
 * event log: what `bench iteration` states for its measured iteration and scripts/iteration-floor.ts for every one.
 */
import { replay, type IterationEvent, type TrajectoryEvent } from '../events/index.ts';
import type { RlConfig } from '../rl/config.ts';
import { ACTOR_NO_SIGNAL } from '../rl/metric-names.ts';
import { resolveRunModel } from '../rl/run-model.ts';
import { rolloutOrder } from '../replay/records.ts';
import { localRunEvents } from '../run/location.ts';
import { iterationFlops, runPacksPrefixes, type IterationFlops } from './iteration-flops.ts';

export interface IterationWithFlops {
  readonly event: IterationEvent;
  /** The iteration's train trajectories, in rollout order. */
  readonly trajectories: readonly TrajectoryEvent[];
  readonly flops: IterationFlops;
}

/** Every iteration of run `runId` under `root`, in order, with its stages' FLOPs; `c` is the run's config. */
export async function runIterationFlops(root: string, runId: string, c: RlConfig): Promise<IterationWithFlops[]> {
  const iterations = new Map<number, IterationEvent>();
  const played = new Map<number, TrajectoryEvent[]>();
  for await (const e of replay(localRunEvents(root), runId)) {
    if (e.kind === 'iteration') iterations.set(e.iteration, e);
    if (e.kind === 'trajectory' && e.split === 'train')
      played.set(e.iteration, [...(played.get(e.iteration) ?? []), e]);
  }
  const { modelConfig: model } = await resolveRunModel(c);
  const packed = runPacksPrefixes(c, model);
  return [...iterations.values()]
    .sort((a, b) => a.iteration - b.iteration)
    .map((event) => {
      const trajectories = rolloutOrder(played.get(event.iteration) ?? []);
      const actorSkipped = event.metrics[ACTOR_NO_SIGNAL] === 1;
      return { event, trajectories, flops: iterationFlops({ model, config: c, trajectories, packed, actorSkipped }) };
    });
}
