/**
 * `fn` over `items` with at most `limit` calls in flight, results in input order: the requests of one
 * checkpoint (its files' uploads, downloads, deletions) go out side by side instead of one round trip
 * after another. The first failure rejects once the calls already in flight have settled.
 */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  let failed: { err: unknown } | null = null;
  const lane = async (): Promise<void> => {
    while (failed === null && next < items.length) {
      const i = next++;
      try {
        out[i] = await fn(items[i], i);
      } catch (err) {
        failed ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, lane));
  if (failed) throw (failed as { err: unknown }).err;
  return out;
}
