import { createHash } from 'node:crypto';
import type { EnvConfigBase } from './types.ts';

/**
 * The environment-spec id: `<type>-<first 8 hex digits of SHA-256 of the config as canonical JSON>`.
 * Two success figures are comparable only when their ids are equal: the id changes with any setting of
 * the environment (generator, slip probability, observation format, budget, …). Canonical JSON sorts the
 * keys of every object, so the id does not depend on the order a config was written in.
 */
export function envSpecId(config: EnvConfigBase): string {
  const digest = createHash('sha256').update(canonicalJson(config)).digest('hex');
  return `${config.type}-${digest.slice(0, 8)}`;
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
