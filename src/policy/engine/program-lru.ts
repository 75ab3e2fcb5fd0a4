/**
 * Compiled programs by key, at most `max` of them: a hit makes its entry the most recent, a miss compiles, and beyond
 * `max` the least recently used is released (onnxruntime frees its memory arena). The policy runs one operation at a
 * time and each fetches its program right before use, so an evicted session is never in use.
 */
import type { Session } from './session.ts';

export class ProgramLru {
  /** Insertion order = recency (a hit moves its key to the end), so the first key is the least recently used. */
  private readonly entries = new Map<string, Promise<unknown>>();

  constructor(readonly max: number) {}

  get size(): number {
    return this.entries.size;
  }

  /** The program for `key`, made by `make` on a miss; a failed compile is forgotten, so the next call retries it. */
  get<T>(key: string, make: () => Promise<T>): Promise<T> {
    let p = this.entries.get(key) as Promise<T> | undefined;
    if (p) this.entries.delete(key);
    else {
      p = make();
      p.catch(() => this.entries.get(key) === p && this.entries.delete(key));
    }
    this.entries.set(key, p);
    while (this.entries.size > this.max) {
      const [oldest, program] = this.entries.entries().next().value as [string, Promise<unknown>];
      this.entries.delete(oldest);
      void releaseProgram(program);
    }
    return p;
  }

  /** Releases every program. */
  async clear(): Promise<void> {
    const all = [...this.entries.values()];
    this.entries.clear();
    for (const p of all) await releaseProgram(p);
  }
}

/** Releases a compiled program's session once its compile settles (a failed compile has nothing to release). */
export async function releaseProgram(p: Promise<unknown>): Promise<void> {
  const v = (await p.catch(() => null)) as { session?: Session } | Session | null;
  const s = v && 'release' in v ? v : (v as { session?: Session } | null)?.session;
  await s?.release();
}
