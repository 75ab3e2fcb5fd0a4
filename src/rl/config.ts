/**
 * Resolving the RL configuration: preset ← config file (JSON) ← flag overrides (`key=value`), validated
 * field by field and across fields, frozen, and serialised canonically (sorted keys) to save with a run.
 * Every error is a ConfigError naming the field. The knobs themselves are documented in config-fields.ts.
 */
import { ConfigError } from '../errors.ts';
import { NEEDS_CRITIC } from './advantages.ts';
import {
  DEFAULTS,
  FIELD_NAMES,
  FIELDS,
  type Field,
  type FieldName,
  type RlConfig,
  type StringField,
} from './config-fields.ts';
import { keepCount } from './filters.ts';
import { PRESETS, type PresetName } from './presets.ts';
import { validateToolConfig } from './tool-use.ts';
import { validateAgentConfig } from './agent-config.ts';

export { DEFAULTS, FIELDS, FIELD_NAMES, type FieldName, type RlConfig } from './config-fields.ts';

export interface ResolveConfigInput {
  /** Starting point (default 'starpo-s', the published defaults). */
  readonly preset?: PresetName;
  /** Parsed JSON object; nested objects flatten like dotted keys ({"clip": {"high": 0.28}} = clipHigh). */
  readonly file?: unknown;
  /** `key=value` strings; keys flat (clipHigh), dotted (clip.high), snake_case or kebab-case. */
  readonly overrides?: readonly string[];
}

/** 'clip.high', 'clip_high', 'clip-high' → 'clipHigh'. */
export function normaliseKey(key: string): string {
  const words = key.split(/[._-]+/).filter((w) => w.length > 0);
  return words.map((w, i) => (i === 0 ? w[0].toLowerCase() + w.slice(1) : w[0].toUpperCase() + w.slice(1))).join('');
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length];
}

/** The known field closest to `key` (case-insensitive edit distance ≤ max(2, ⌊len/3⌋)), if any. */
export function suggestField(key: string): FieldName | null {
  let best: FieldName | null = null;
  let bestD = Math.max(2, Math.floor(key.length / 3)) + 1;
  for (const name of FIELD_NAMES) {
    const d = editDistance(key.toLowerCase(), name.toLowerCase());
    if (d < bestD) [best, bestD] = [name, d];
  }
  return best;
}

/** Whether `key` names a field: an own property of the table, so `toString` or `constructor` is not one. */
export function isFieldName(key: string): key is FieldName {
  return Object.hasOwn(FIELDS, key);
}

function fieldName(raw: string): FieldName {
  const key = normaliseKey(raw);
  if (isFieldName(key)) return key;
  const hint = suggestField(key);
  throw new ConfigError(raw, `unknown key${hint ? `; did you mean "${hint}"?` : ''}`);
}

function describeRange(f: Field): string {
  if (f.kind === 'enum') return `one of ${f.values.map((v) => `"${v}"`).join(', ')}`;
  if (f.kind === 'string') return f.items ? `a list of ${f.items.join(', ')}` : 'a string';
  if (f.kind === 'bool') return 'true or false';
  const what = f.kind === 'int' ? 'an integer' : 'a number';
  const openMin = f.kind === 'number' && f.openMin === true;
  const openMax = f.kind === 'number' && f.openMax === true;
  if (f.min !== undefined && f.max !== undefined) {
    return `${what} in ${openMin ? '(' : '['}${f.min}, ${f.max}${openMax ? ')' : ']'}`;
  }
  if (f.min !== undefined) return `${what} ${openMin ? '>' : '≥'} ${f.min}`;
  if (f.max !== undefined) return `${what} ${openMax ? '<' : '≤'} ${f.max}`;
  return what;
}

/** Checks one typed value against its field; returns it. */
function checkValue(name: FieldName, value: unknown): RlConfig[FieldName] {
  const f: Field = FIELDS[name];
  const bad = (): never => {
    // JSON.stringify writes NaN and ±Infinity (a file's 1e400) as null.
    const shown = typeof value === 'number' && !Number.isFinite(value) ? String(value) : JSON.stringify(value);
    throw new ConfigError(name, `must be ${describeRange(f)}, got ${shown ?? String(value)}`);
  };
  if (f.kind === 'bool') return typeof value === 'boolean' ? value : bad();
  if (f.kind === 'string') return checkString(name, f, value);
  if (f.kind === 'enum') {
    const truth = value === true || value === 'true' ? 1 : value === false || value === 'false' ? 0 : null;
    if (f.fromBoolean && truth !== null) return f.fromBoolean[truth] as RlConfig[FieldName];
    return typeof value === 'string' && f.values.includes(value) ? (value as RlConfig[FieldName]) : bad();
  }
  if (typeof value !== 'number' || !Number.isFinite(value)) return bad();
  if (f.kind === 'int' && !Number.isInteger(value)) return bad();
  const openMin = f.kind === 'number' && f.openMin;
  const openMax = f.kind === 'number' && f.openMax;
  if (f.min !== undefined && (value < f.min || (openMin && value === f.min))) return bad();
  if (f.max !== undefined && (value > f.max || (openMax && value === f.max))) return bad();
  return value;
}

/** A string, or for a list field its items (a comma-separated string or a JSON array) joined by commas. */
function checkString(name: FieldName, f: StringField, value: unknown): string {
  const items = Array.isArray(value) ? value : typeof value === 'string' && f.items ? value.split(',') : null;
  if (!items) {
    if (typeof value !== 'string') throw new ConfigError(name, `must be a string, got ${JSON.stringify(value)}`);
    return value;
  }
  const out = items.map((v) => (typeof v === 'string' ? v.trim() : v));
  for (const item of out) {
    if (typeof item !== 'string' || !f.items!.includes(item))
      throw new ConfigError(name, `${JSON.stringify(item)} is not one of ${f.items!.join(', ')}`);
  }
  if (out.length === 0 || new Set(out).size !== out.length)
    throw new ConfigError(name, 'must list distinct items, at least one');
  return out.join(',');
}

/** A flag's text value, typed by its field: numbers via Number(), booleans "true"/"false", enums as is. */
function parseFlagValue(name: FieldName, text: string): unknown {
  const f = FIELDS[name];
  if (f.kind === 'bool') return text === 'true' ? true : text === 'false' ? false : text;
  if (f.kind === 'enum' || f.kind === 'string') return text;
  // Text that is no finite number stays text, so the error quotes what was typed ("ten", not NaN's `null`).
  const n = Number(text);
  return text.trim() === '' || !Number.isFinite(n) ? text : n;
}

/** Flattens a parsed config file into [field, value] pairs; nested objects join their keys like dots. */
function flattenFile(json: unknown, prefix = ''): [FieldName, unknown][] {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new ConfigError(prefix || 'config file', 'must be a JSON object');
  }
  return Object.entries(json).flatMap(([k, v]): [FieldName, unknown][] => {
    const path = prefix ? `${prefix}.${k}` : k;
    const isObject = typeof v === 'object' && v !== null && !Array.isArray(v);
    return isObject && !isFieldName(normaliseKey(path)) ? flattenFile(v, path) : [[fieldName(path), v]];
  });
}

function parseOverride(flag: string): [FieldName, unknown] {
  const eq = flag.indexOf('=');
  if (eq <= 0) throw new ConfigError(flag, 'override must look like key=value');
  const name = fieldName(flag.slice(0, eq).trim());
  return [name, parseFlagValue(name, flag.slice(eq + 1).trim())];
}

export function resolveConfig(input: ResolveConfigInput = {}): RlConfig {
  const preset = input.preset ?? 'starpo-s';
  if (!Object.hasOwn(PRESETS, preset)) {
    throw new ConfigError('preset', `unknown preset "${preset}"; one of ${Object.keys(PRESETS).join(', ')}`);
  }
  const layers: [FieldName, unknown][] = [
    ...(Object.entries(PRESETS[preset]) as [FieldName, unknown][]),
    ...(input.file === undefined ? [] : flattenFile(input.file)),
    ...(input.overrides ?? []).map(parseOverride),
  ];
  const config: Record<string, unknown> = { ...DEFAULTS };
  for (const [name, value] of layers) config[name] = checkValue(name, value);
  // A pretrained model reads the natural-language prompt; the compact one is for models trained from scratch.
  const chosen = new Set(layers.slice(Object.keys(PRESETS[preset]).length).map(([name]) => name));
  if (config.model !== '' && !chosen.has('template')) config.template = 'full';
  validateConfig(config as RlConfig);
  return Object.freeze(config) as RlConfig;
}

/** Whether the run has a frozen reference model: only a KL term to it needs one. */
export const hasReferenceModel = (c: Pick<RlConfig, 'klCoef'>): boolean => c.klCoef > 0;

/**
 * Trajectories trained per iteration when it is known before rollout: all of them (no filter, or DAPO
 * refilling to envGroups), or ⌈fraction·N⌉ groups for top/bottom-std; null when it depends on the data.
 */
export function trainedBatchSize(c: RlConfig): number | null {
  if (c.filter === 'none') return c.envGroups * c.groupSize;
  if ((c.filter === 'top-std' || c.filter === 'bottom-std') && !c.dynamicSampling) {
    return keepCount(c.filterFraction, c.envGroups) * c.groupSize;
  }
  return null;
}

/** Cross-field rules; each error names the field to change. */
export function validateConfig(c: RlConfig): void {
  if (NEEDS_CRITIC[c.advantage] && !c.critic) {
    throw new ConfigError('critic', `advantage "${c.advantage}" needs a critic`);
  }
  if (!NEEDS_CRITIC[c.advantage] && c.critic) {
    throw new ConfigError('critic', `only advantage "gae" uses a critic; set critic=false for "${c.advantage}"`);
  }
  if (c.advantage !== 'gae' && c.advantage !== 'reinforce++' && c.groupSize < 2) {
    throw new ConfigError('groupSize', `advantage "${c.advantage}" compares rollouts within a group: needs ≥ 2`);
  }
  if (c.dualClip !== 0 && c.dualClip <= 1) {
    throw new ConfigError('dualClip', `must be 0 (off) or > 1, got ${c.dualClip}`);
  }
  if (c.filterBandLow >= c.filterBandHigh) {
    throw new ConfigError('filterBandHigh', 'must be greater than filterBandLow');
  }
  if (c.maxActionsPerTurn > 0 && c.maxActionsPerTrajectory > 0 && c.maxActionsPerTurn > c.maxActionsPerTrajectory) {
    throw new ConfigError('maxActionsPerTurn', `must be ≤ maxActionsPerTrajectory (${c.maxActionsPerTrajectory})`);
  }
  if (c.modelHidden % c.modelHeads !== 0)
    throw new ConfigError('modelHeads', `must divide modelHidden (${c.modelHidden})`);
  if (c.modelHeads % c.modelKvHeads !== 0)
    throw new ConfigError('modelKvHeads', `must divide modelHeads (${c.modelHeads})`);
  const trained = trainedBatchSize(c);
  if (trained !== null && c.miniBatchSize > trained) {
    throw new ConfigError('miniBatchSize', `${c.miniBatchSize} exceeds the ${trained} trajectories trained`);
  }
  if (trained !== null && c.onlineK > 0 && c.onlineK * c.miniBatchSize !== trained) {
    throw new ConfigError('onlineK', `${c.onlineK} × miniBatchSize ${c.miniBatchSize} ≠ ${trained} trained`);
  }
  validateAsyncConfig(c);
  validateToolConfig(c);
  validateAgentConfig(c);
}

/** asyncStaleness and the off-policy correction: what a resumed asynchronous run reads back must exist. */
function validateAsyncConfig(c: RlConfig): void {
  if (c.offPolicyCorrection === 'tis' && c.oldLogprobs !== 'recompute') {
    throw new ConfigError(
      'offPolicyCorrection',
      'tis weighs recomputed against behaviour log-probs: needs oldLogprobs=recompute',
    );
  }
  if (c.asyncStaleness === 0) return;
  if (c.checkpointEvery !== 1) {
    throw new ConfigError(
      'checkpointEvery',
      `must be 1 with asyncStaleness ${c.asyncStaleness}: every policy version is a checkpoint`,
    );
  }
  if (c.keepLastCheckpoints < c.asyncStaleness + 1) {
    throw new ConfigError(
      'keepLastCheckpoints',
      `must be ≥ asyncStaleness + 1 (${c.asyncStaleness + 1}): ` +
        'the rollouts after a checkpoint play with the versions before it',
    );
  }
}

/**
 * The fields among `fields` (default every one) where config `there` (a stored run's) and `here` differ, as
 * "<field> <there's> there, <here's> here" joined by "; "; '' when they agree.
 */
export function configDifferences(there: RlConfig, here: RlConfig, fields: readonly FieldName[] = FIELD_NAMES): string {
  return fields
    .filter((k) => JSON.stringify(there[k]) !== JSON.stringify(here[k]))
    .map((k) => `${k} ${String(there[k])} there, ${String(here[k])} here`)
    .join('; ');
}

/** Sorted-key, compact JSON of a resolved config: equal configs give equal strings (save it with the run). */
export function canonicalConfigJSON(c: RlConfig): string {
  return JSON.stringify(Object.fromEntries([...FIELD_NAMES].sort().map((k) => [k, c[k]])));
}

/**
 * Reads a saved config (canonical or not): every field present is applied over the defaults and validated.
 * `source` names where the text came from (a run's config.json path, an S3 key) in the error a bad file gets.
 */
export function configFromJSON(text: string, source = 'config file'): RlConfig {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    throw new ConfigError(source, `is not valid JSON (${(cause as Error).message})`, { cause });
  }
  return resolveConfig({ file: json });
}
