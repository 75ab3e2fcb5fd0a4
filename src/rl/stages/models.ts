/** A run's models as the stages use them (both drivers). */
import type { PolicyHandle } from '../../policy/engine/handle.ts';

/** A run's models: in-process Policies or PolicyEngines (`P`), which the stages use alike. */
export interface IterationModels<P extends PolicyHandle = PolicyHandle> {
  actor: P;
  critic: P | null;
  /** Frozen reference for the KL term (null when klCoef = 0). */
  ref: P | null;
}
