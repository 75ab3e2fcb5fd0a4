/**
 * Batches the generation requests of concurrent calls: the engine runs one batch at a time, and every call
 * that arrives meanwhile waits for the next one, grouped with the calls that share its settings (token limit,
 * sampling, stops — one generate call takes one of each). Each row keeps its own sampling seed, so what a call
 * samples does not depend on the calls it shares a batch with (up to float rounding of the batch's padded
 * shapes, as in the built-in rollouts).
 */
import type { GenerationBackend } from '../policy/engine/handle.ts';

export interface GenerationRow {
  readonly prompt: readonly number[];
  readonly maxNewTokens: number;
  readonly sampling: { readonly temperature: number; readonly topP?: number; readonly topK?: number };
  readonly seed: number;
  readonly stopStrings: readonly string[];
  readonly stopTokenIds: readonly number[];
  /** The row's tokens as they are generated (a streamed completion). */
  readonly onToken?: (token: number) => void;
}

export type Generated = Awaited<ReturnType<GenerationBackend['generate']>>[number];

interface Waiting {
  row: GenerationRow;
  key: string;
  resolve: (g: Generated) => void;
  reject: (err: unknown) => void;
}

const settingsKey = (r: GenerationRow): string =>
  JSON.stringify([
    r.maxNewTokens,
    r.sampling.temperature,
    r.sampling.topP ?? 1,
    r.sampling.topK ?? 0,
    r.stopStrings,
    r.stopTokenIds,
  ]);

export class GenerationBatcher {
  private readonly queue: Waiting[] = [];
  private running = false;

  /** @param maxRows most rows in one generate call */
  constructor(
    private readonly backend: GenerationBackend,
    private readonly maxRows = 32,
  ) {}

  generate(row: GenerationRow): Promise<Generated> {
    return new Promise((resolve, reject) => {
      this.queue.push({ row, key: settingsKey(row), resolve, reject });
      // Calls arriving in the same turn of the event loop join the first batch.
      if (!this.running) setImmediate(() => void this.drain());
      this.running = true;
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const key = this.queue[0].key;
      const batch = this.queue.filter((w) => w.key === key).slice(0, this.maxRows);
      for (const w of batch) this.queue.splice(this.queue.indexOf(w), 1);
      const { maxNewTokens, sampling, stopStrings, stopTokenIds } = batch[0].row;
      try {
        const out = await this.backend.generate({
          prompts: batch.map((w) => w.row.prompt),
          rowSeeds: batch.map((w) => w.row.seed),
          maxNewTokens,
          sampling,
          stopStrings,
          stopTokenIds,
          ...(batch.some((w) => w.row.onToken) && {
            onToken: (row: number, token: number) => batch[row]?.row.onToken?.(token),
          }),
        });
        batch.forEach((w, i) => w.resolve(out[i]));
      } catch (err) {
        for (const w of batch) w.reject(err);
      }
    }
    this.running = false;
  }
}
