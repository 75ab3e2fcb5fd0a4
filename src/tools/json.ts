/** Canonical JSON and the bounds on model-written JSON. */
import type { Json } from '../envs/types.ts';
import { StarpoError } from '../errors.ts';

/**
 * How deep model-written tool-call JSON may nest. Calls are parsed against it (parseFunctionCall), so every
 * later walk over arguments (canonical JSON for events and rewards, serialisation) stays far from the
 * stack limit; real calls nest two or three levels.
 */
export const MAX_JSON_DEPTH = 32;

/** The deepest nesting of arrays and objects in JSON text, read in one pass (strings skipped, nothing parsed). */
export function jsonDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // a string: skip to its closing quote, past escapes
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++;
    } else if (c === 0x5b || c === 0x7b) {
      deepest = Math.max(deepest, ++depth);
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return deepest;
}

/** Canonical JSON: object keys sorted at every depth, so equal values give equal text whatever the key order. */
export function canonicalJson(value: Json): string {
  return JSON.stringify(sortKeys(value, 0));
}

function sortKeys(value: Json, depth: number): Json {
  if (depth > MAX_JSON_DEPTH) throw new StarpoError(`JSON nests deeper than ${MAX_JSON_DEPTH} levels`);
  if (Array.isArray(value)) return value.map((v) => sortKeys(v, depth + 1));
  if (value === null || typeof value !== 'object') return value;
  const out: { [key: string]: Json } = {};
  for (const key of Object.keys(value).sort()) out[key] = sortKeys(value[key] as Json, depth + 1);
  return out;
}

/** A plain JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is { [key: string]: Json } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
