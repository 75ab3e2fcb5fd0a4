/**
 * The state a trajectory ended in. Events record the state before each turn, not after the last one;
 * environments are deterministic per seed (stochastic ones included: same seed, same outcomes), so the
 * executed actions are re-enacted from reset. The re-enactment must reproduce every recorded state,
 * otherwise (an environment changed since the run) no final state is claimed.
 */
import { createEnv, type EnvConfig } from '../envs/index.ts';
import type { TrajectoryView } from './model.ts';

export function finalObservation(env: EnvConfig, t: TrajectoryView): string | undefined {
  try {
    const game = createEnv(env);
    game.reset(t.seed);
    for (const turn of t.turns) {
      if (game.anchor() !== turn.observation) return undefined;
      for (const action of turn.actions) {
        if (game.done) return undefined;
        game.step(action);
      }
    }
    return game.anchor();
  } catch {
    return undefined;
  }
}

/** Adds `finalObservation` where the environment draws states (a legend) and the re-enactment agrees. */
export function withFinalStates(
  env: EnvConfig | null,
  hasLegend: boolean,
  ts: readonly TrajectoryView[],
): TrajectoryView[] {
  if (!env || !hasLegend) return [...ts];
  return ts.map((t) => {
    const final = finalObservation(env, t);
    return final === undefined ? t : { ...t, finalObservation: final };
  });
}
