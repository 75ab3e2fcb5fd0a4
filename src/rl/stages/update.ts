/** The update stage on the kept rows. The durable driver's `update` activity (which also writes the checkpoint). */
import type { RlConfig } from '../config.ts';
import { type UpdateInput, updateStage } from '../update.ts';
import { samplingSeed } from '../seeds.ts';
import type { Trainer } from '../../policy/engine/handle.ts';

/** Stage: the update on the kept rows (updateInputOf), its mini-batches seeded by the iteration. */
export function updateKeptRows(
  c: RlConfig,
  iteration: number,
  input: UpdateInput,
  models: { actor: Trainer; critic: Trainer | null },
): Promise<Record<string, number>> {
  return input.tokens.batch === 0 ? Promise.resolve({}) : updateStage(input, models, c, samplingSeed(c, iteration));
}
