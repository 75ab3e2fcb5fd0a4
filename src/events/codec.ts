/**
 * Event <-> Avro bytes. One table says, per event kind, which envelope branch carries it and which
 * fields are timestamps; encoding and decoding are the same few lines for every kind.
 */
import type avro from 'avsc';
import { CorruptDataError, StarpoError } from '../errors.ts';
import { checkEncoded } from './avro-bounds.ts';
import { assertSafeId } from './ids.ts';
import { schemaRegistry, type SchemaVersion } from './schemas.ts';
import { fromTimestampMillis, toTimestampMillis } from './time.ts';
import type { EventKind, StarpoEvent, Turn } from './types.ts';

interface KindSpec {
  /** Full name of the Avro record (the union branch in the StarpoEvent envelope). */
  branch: string;
  /** Fields holding Dates in the domain and timestamp-millis longs on the wire. */
  timestamps: readonly string[];
}

const NS = 'dev.starpo.events';
export const EVENT_KINDS = {
  run: { branch: `${NS}.RunEvent`, timestamps: ['at'] },
  trajectory: { branch: `${NS}.TrajectoryEvent`, timestamps: ['startedAt', 'finishedAt'] },
  iteration: { branch: `${NS}.IterationEvent`, timestamps: ['startedAt', 'finishedAt'] },
  checkpoint: { branch: `${NS}.CheckpointEvent`, timestamps: ['createdAt'] },
  'echo-trap': { branch: `${NS}.EchoTrapWarning`, timestamps: ['detectedAt'] },
} as const satisfies Record<EventKind, KindSpec>;

const KIND_OF_BRANCH = new Map<string, EventKind>(
  Object.entries(EVENT_KINDS).map(([kind, spec]) => [spec.branch, kind as EventKind]),
);

type Json = Record<string, unknown>;

/** avsc decodes records into generated classes; copy them into plain objects (arrays and maps too). */
function toPlain(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toPlain);
  if (value === null || typeof value !== 'object' || Buffer.isBuffer(value)) return value;
  const out: Json = {};
  for (const [k, v] of Object.entries(value)) out[k] = toPlain(v);
  return out;
}

/**
 * A trajectory turn's fields whose TypeScript name (the one every turn record uses) differs from the
 * Avro name, which stays as written in schemas/ so existing logs and fixtures read.
 */
export const TURN_AVRO_NAMES = {
  executedActions: 'actions',
  actionsValid: 'validActions',
  actionsEffective: 'effectiveActions',
} as const satisfies Partial<Record<keyof Turn, string>>;

function renameFields(record: Json, names: Readonly<Record<string, string>>): Json {
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [names[k] ?? k, v]));
}

const TURN_TS_NAMES: Record<string, string> = Object.fromEntries(
  Object.entries(TURN_AVRO_NAMES).map(([ts, avro]) => [avro, ts]),
);

function toAvroRecord(event: StarpoEvent): Json {
  const { kind, ...record } = event as StarpoEvent & Json;
  for (const field of EVENT_KINDS[kind].timestamps) record[field] = toTimestampMillis(record[field] as Date);
  if (kind === 'trajectory') record.turns = (record.turns as Json[]).map((t) => renameFields(t, TURN_AVRO_NAMES));
  return record;
}

function fromAvroRecord(kind: EventKind, avroRecord: unknown): StarpoEvent {
  const record = toPlain(avroRecord) as Json;
  for (const field of EVENT_KINDS[kind].timestamps) record[field] = fromTimestampMillis(record[field] as number);
  if (kind === 'trajectory') {
    checkTokenRoles(record.tokenIds as number[], record.tokenRoles as string);
    record.turns = (record.turns as Json[]).map((t) => renameFields(t, TURN_TS_NAMES));
  }
  return { kind, ...record } as unknown as StarpoEvent;
}

/** A trajectory's roles are one digit 0–5 per token (or both empty, in events older than v4). */
function checkTokenRoles(ids: readonly number[], roles: string): void {
  if (roles.length !== ids.length || !/^[0-5]*$/.test(roles))
    throw new CorruptDataError(
      `trajectory event: ${roles.length} token roles for ${ids.length} tokens, or a role that is not 0-5`,
    );
}

/** The envelope value avsc encodes (wrapped union: `{ event: { <branch>: record } }`). */
export function toEnvelope(event: StarpoEvent): Json {
  assertSafeId('runId', event.runId);
  assertSafeId('lineageId', event.lineageId);
  if (event.kind === 'run' && event.parentLineageId !== null) assertSafeId('parentLineageId', event.parentLineageId);
  return { event: { [EVENT_KINDS[event.kind].branch]: toAvroRecord(event) } };
}

/** Turns a decoded envelope (of the current schema) back into a domain event. */
export function fromEnvelope(envelope: unknown): StarpoEvent {
  const wrapped = (envelope as { event: Json }).event;
  const branch = Object.keys(wrapped)[0];
  const kind = KIND_OF_BRANCH.get(branch);
  if (kind === undefined) throw new CorruptDataError(`unknown event branch ${branch}`);
  return fromAvroRecord(kind, wrapped[branch]);
}

/** Avro binary of the event under `schema` (the current version unless a test says otherwise). */
export function encodeEvent(event: StarpoEvent, schema: SchemaVersion = schemaRegistry().current): Buffer {
  const envelope = toEnvelope(event);
  try {
    return schema.type.toBuffer(envelope);
  } catch (cause) {
    const paths: string[] = [];
    schema.type.isValid(envelope, { errorHook: (path) => paths.push(path.join('.')) });
    throw new StarpoError(`cannot encode ${event.kind} event of run ${event.runId}: invalid ${paths.join(', ')}`, {
      cause,
      details: { kind: event.kind, paths },
    });
  }
}

/** A writer's schema: its type (for the bounds check) and the resolver that reads it as the current one. */
export interface WriterSchema {
  type: avro.Type;
  resolver: avro.Resolver | undefined;
}

const writerSchemas = new WeakMap<avro.Type, WriterSchema>();

export function writerSchema(type: avro.Type = schemaRegistry().current.type): WriterSchema {
  let known = writerSchemas.get(type);
  if (known === undefined) {
    known = { type, resolver: schemaRegistry().resolverFor(type) };
    writerSchemas.set(type, known);
  }
  return known;
}

/**
 * Decodes the record at `pos` of `buf`, written under `writer`, into a current-schema event; returns it
 * and where the record ends. The bytes are bounds-checked against the writer's schema first
 * (avro-bounds.ts), so damaged input fails fast. CorruptDataError when they are not such a record.
 */
export function decodeEventAt(
  buf: Buffer,
  pos: number,
  writer: WriterSchema = writerSchema(),
): { event: StarpoEvent; end: number } {
  try {
    const end = checkEncoded(writer.type, buf, pos);
    const { value, offset } = schemaRegistry().current.type.decode(buf, pos, writer.resolver);
    if (offset !== end) throw new CorruptDataError(`record decodes to byte ${offset}, not ${end}`);
    return { event: fromEnvelope(value), end };
  } catch (cause) {
    if (cause instanceof CorruptDataError) throw cause;
    throw new CorruptDataError(`undecodable event at byte ${pos}: ${(cause as Error).message}`, { cause });
  }
}

/** Decodes a buffer holding exactly one record written under `writer` (default: the current schema). */
export function decodeEvent(bytes: Buffer, writer?: avro.Type): StarpoEvent {
  const { event, end } = decodeEventAt(bytes, 0, writerSchema(writer));
  if (end !== bytes.length) throw new CorruptDataError(`${bytes.length - end} bytes follow the event's record`);
  return event;
}
