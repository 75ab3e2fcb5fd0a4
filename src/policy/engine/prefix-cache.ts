/**
 * Keys and values of token prefixes already computed under the current weights, kept between generate
 * calls: a rollout's rows find the prompt of their previous turn here (their new prompt extends it) and
 * prefill only what was appended since; rows sharing a prefix (a group's first prompt) find it once it is
 * computed for one of them. A prefix's keys and values depend only on its tokens (see kv-cache.ts and
 * programs/generate.ts), so which entry a row finds, or whether it finds one, never changes its results.
 *
 * Bounded: at most `budget` floats are kept; the least recently used entries go first, and a prefix larger
 * than the whole budget is not kept (its row re-prefills). An entry whose tokens another entry extends is
 * dropped when that one is added (the longer one serves every lookup the shorter one would).
 * The owner clears it whenever the weights change.
 */
import type { RowKv } from './kv-cache.ts';

interface Entry {
  readonly ids: readonly number[];
  readonly kv: RowKv;
  readonly floats: number;
  used: number;
}

export interface PrefixMatch {
  readonly kv: RowKv;
  /** Leading tokens the entry holds for this prompt. */
  readonly length: number;
}

/** Length of the common prefix of a and b. */
export function commonPrefix(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

export class PrefixCache {
  private entries: Entry[] = [];
  private floats = 0;
  private clock = 0;

  /** budget: floats kept at most (4 bytes each). */
  constructor(readonly budget: number) {}

  get size(): number {
    return this.entries.length;
  }

  get usedFloats(): number {
    return this.floats;
  }

  clear(): void {
    this.entries = [];
    this.floats = 0;
  }

  /** The entry sharing the longest prefix with `ids`, at most `limit` tokens of it; null below one token. */
  match(ids: readonly number[], limit = ids.length): PrefixMatch | null {
    let best: Entry | null = null;
    let length = 0;
    for (const e of this.entries) {
      if (e.ids.length <= length) continue;
      const n = Math.min(commonPrefix(e.ids, ids), limit);
      if (n > length) [best, length] = [e, n];
    }
    if (!best) return null;
    best.used = ++this.clock;
    return { kv: best.kv, length };
  }

  /** Keeps the prefix `ids` with its keys and values (per cache name, [K, ids.length, E]). */
  add(ids: readonly number[], kv: RowKv): void {
    const floats = Object.values(kv).reduce((s, a) => s + a.length, 0);
    if (floats > this.budget) return;
    if (this.entries.some((e) => e.ids.length >= ids.length && commonPrefix(e.ids, ids) === ids.length)) return;
    this.entries = this.entries.filter((e) => {
      const covered = e.ids.length < ids.length && commonPrefix(e.ids, ids) === e.ids.length;
      if (covered) this.floats -= e.floats;
      return !covered;
    });
    while (this.floats + floats > this.budget) this.evictOldest();
    this.entries.push({ ids: ids.slice(), kv, floats, used: ++this.clock });
    this.floats += floats;
  }

  private evictOldest(): void {
    let oldest = 0;
    for (let i = 1; i < this.entries.length; i++) if (this.entries[i].used < this.entries[oldest].used) oldest = i;
    this.floats -= this.entries[oldest].floats;
    this.entries.splice(oldest, 1);
  }
}
