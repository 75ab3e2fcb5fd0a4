import { ConfigError } from '../errors.ts';

/**
 * Names picked from `known` by a comma-separated list on the command line or in a variable, in the list's order
 * (all of `known` when `list` is absent); refused whole, naming every unknown entry and the known ones, before
 * any work starts.
 */
export function pickNames<T extends string>(
  field: string,
  what: string,
  list: string | undefined,
  known: readonly T[],
): T[] {
  if (list === undefined) return [...known];
  const names = list.split(',').map((s) => s.trim());
  const unknown = names.filter((n) => !(known as readonly string[]).includes(n));
  if (unknown.length > 0)
    throw new ConfigError(field, `unknown ${what} ${unknown.join(', ')}; known: ${known.join(', ')}`);
  return names as T[];
}
