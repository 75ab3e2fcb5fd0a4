import type { IterationModels } from './iteration.ts';

/** After a warm-start: RL starts with fresh optimizer moments, and the KL reference is the warm-started policy. */
export async function startFromWarmStart(m: IterationModels): Promise<void> {
  const { weights } = await m.actor.getState(false);
  await m.actor.setState({ weights, optimizer: null, step: 0 }, { allowMissing: [] });
  await m.ref?.setState({ weights, optimizer: null, step: 0 }, { allowMissing: [] });
}
