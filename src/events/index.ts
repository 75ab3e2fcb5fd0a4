/**
 * The event log's public face: pick an implementation by `kind` (a registry, not a branch) and read
 * back with replay. Embedded runs use `local` (Avro files under runs/); durable runs use `kafka`.
 */
import { createKafkaEventLog, type KafkaEventLogOptions } from './kafka-log.ts';
import { createKafkaEventReader, type KafkaEventReaderOptions } from './kafka-reader.ts';
import { createLocalEventLog, type LocalEventLogOptions } from './local-log.ts';
import { createLocalEventReader } from './local-reader.ts';
import type { EventLog, EventReader } from './types.ts';

export type EventLogConfig =
  ({ kind: 'local' } & LocalEventLogOptions) | ({ kind: 'kafka' } & KafkaEventLogOptions & KafkaEventReaderOptions);

type Kind = EventLogConfig['kind'];
type ConfigOf<K extends Kind> = Extract<EventLogConfig, { kind: K }>;

const LOGS: { [K in Kind]: (config: ConfigOf<K>) => EventLog } = {
  local: createLocalEventLog,
  kafka: createKafkaEventLog,
};
const READERS: { [K in Kind]: (config: ConfigOf<K>) => EventReader } = {
  local: createLocalEventReader,
  kafka: createKafkaEventReader,
};

export function createEventLog(config: EventLogConfig): EventLog {
  return (LOGS[config.kind] as (c: EventLogConfig) => EventLog)(config);
}

export function createEventReader(config: EventLogConfig): EventReader {
  return (READERS[config.kind] as (c: EventLogConfig) => EventReader)(config);
}

export { createKafkaEventLog, createKafkaEventReader, createLocalEventLog, createLocalEventReader };
export { replay, replayEvents, ReplayFilter, type DropReason, type ReplayOptions } from './replay.ts';
export { chooseLineage, ownerOf, type LineagePlan, type LineageStart } from './lineage.ts';
export { eventKey, eventIteration } from './event-key.ts';
export { decodeEvent, encodeEvent } from './codec.ts';
export { schemaRegistry } from './schemas.ts';
export { fromTimestampMillis, toTimestampMillis } from './time.ts';
export type * from './types.ts';
