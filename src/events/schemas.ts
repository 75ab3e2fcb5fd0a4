/**
 * Loads the Avro schemas from schemas/ (the current version) and schemas/history/v<N>/ (every earlier
 * version) and indexes them by fingerprint, so a record written under any known version can be
 * resolved into the current one (avsc `createResolver`; new fields take their defaults).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import avro from 'avsc';
import { CorruptDataError } from '../errors.ts';

export const SCHEMA_DIR = fileURLToPath(new URL('../../schemas/', import.meta.url));
const ENVELOPE_FILE = 'StarpoEvent.avsc';

export interface SchemaVersion {
  version: number;
  /** The envelope type (StarpoEvent), every event record included. */
  type: avro.Type;
  /** Self-contained schema JSON (docs and logicalType annotations kept), for file headers. */
  json: Record<string, unknown>;
  /** Lower-case hex SHA-256 of the parsing canonical form (what Kafka headers carry). */
  fingerprint: string;
}

type JsonSchema = Record<string, unknown>;

function readJson(path: string): JsonSchema {
  return JSON.parse(readFileSync(path, 'utf8')) as JsonSchema;
}

/** Replaces the envelope's union of names by the record schemas themselves, so the JSON stands alone. */
function expandEnvelope(envelope: JsonSchema, records: Map<string, JsonSchema>): JsonSchema {
  const fields = (envelope.fields as JsonSchema[]).map((field) => {
    if (!Array.isArray(field.type)) return field;
    const branches = field.type.map((name: unknown) => (typeof name === 'string' ? (records.get(name) ?? name) : name));
    return { ...field, type: branches };
  });
  return { ...envelope, fields };
}

/** Reads one version's directory: every *.avsc record plus the envelope that unites them. */
export function loadSchemaVersion(dir: string, version: number): SchemaVersion {
  const records = new Map<string, JsonSchema>();
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.avsc') && f !== ENVELOPE_FILE)
    .sort()) {
    const schema = readJson(join(dir, file));
    records.set(`${String(schema.namespace)}.${String(schema.name)}`, schema);
  }
  const json = expandEnvelope(readJson(join(dir, ENVELOPE_FILE)), records);
  const type = avro.Type.forSchema(json as avro.Schema);
  return { version, type, json, fingerprint: type.fingerprint('sha256').toString('hex') };
}

/** Every known schema version, and resolvers from each into the current one. */
export class SchemaRegistry {
  readonly current: SchemaVersion;
  private readonly byPrint = new Map<string, SchemaVersion>();
  private readonly resolvers = new Map<string, avro.Resolver>();

  constructor(versions: readonly SchemaVersion[]) {
    if (versions.length === 0) throw new CorruptDataError('schema registry needs at least one version');
    this.current = versions.reduce((a, b) => (b.version > a.version ? b : a));
    for (const v of versions) this.byPrint.set(v.fingerprint, v);
  }

  /** The version with this fingerprint (hex), or undefined when no known schema has it. */
  byFingerprint(fingerprint: string): SchemaVersion | undefined {
    return this.byPrint.get(fingerprint);
  }

  /** A resolver reading `writer` data as the current type; undefined when writer is the current type. */
  resolverFor(writer: avro.Type): avro.Resolver | undefined {
    const print = writer.fingerprint('sha256').toString('hex');
    if (print === this.current.fingerprint) return undefined;
    let resolver = this.resolvers.get(print);
    if (resolver === undefined) {
      resolver = this.current.type.createResolver(writer);
      this.resolvers.set(print, resolver);
    }
    return resolver;
  }
}

/** Versions under schemas/history/v<N>/, oldest first. */
function historyVersions(root: string): SchemaVersion[] {
  const dirs = readdirSync(join(root, 'history'), { withFileTypes: true })
    .filter((d) => d.isDirectory() && /^v\d+$/.test(d.name))
    .map((d) => Number(d.name.slice(1)))
    .sort((a, b) => a - b);
  return dirs.map((n) => loadSchemaVersion(join(root, 'history', `v${n}`), n));
}

let shared: SchemaRegistry | undefined;

/** The process-wide registry: history versions plus schemas/ as version (newest history + 1). */
export function schemaRegistry(): SchemaRegistry {
  if (shared === undefined) {
    const history = historyVersions(SCHEMA_DIR);
    const currentVersion = (history.at(-1)?.version ?? 0) + 1;
    shared = new SchemaRegistry([...history, loadSchemaVersion(SCHEMA_DIR, currentVersion)]);
  }
  return shared;
}
