/** What the Kafka event log's producer and reader must agree on: topic, headers, partitioning, client. */
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { endpoints } from '../endpoints.ts';

export const DEFAULT_TOPIC = 'starpo.events';
/** Hex SHA-256 fingerprint of the writer's envelope schema (see schemas.ts). */
export const FINGERPRINT_HEADER = 'starpo-schema-fingerprint';
/** The event key (event-key.ts), so tools can dedupe or route without decoding the value. */
export const EVENT_KEY_HEADER = 'starpo-event-key';
export const EVENT_KIND_HEADER = 'starpo-event-kind';
/** Hex SHA-256 of the record's value, checked on read (absent on records written before it existed). */
export const PAYLOAD_DIGEST_HEADER = 'starpo-payload-sha256';

export interface KafkaConnectionOptions {
  /** Default: the local broker (endpoints.kafka.brokers). */
  brokers?: string[];
  /** One topic per deployment; runs share it, keyed by run id. Default "starpo.events". */
  topic?: string;
  clientId?: string;
  /** Client retries (exponential backoff) before an operation fails. Default 5 (about 10 s). */
  retries?: number;
  connectionTimeoutMs?: number;
  requestTimeoutMs?: number;
}

export function createKafka(options: KafkaConnectionOptions): Kafka {
  return new Kafka({
    clientId: options.clientId ?? 'starpo',
    brokers: options.brokers ?? endpoints.kafka.brokers,
    logLevel: logLevel.NOTHING, // failures surface as StarpoErrors with context instead
    connectionTimeout: options.connectionTimeoutMs ?? 3000,
    requestTimeout: options.requestTimeoutMs ?? 30_000,
    retry: { retries: options.retries ?? 5, initialRetryTime: 300, maxRetryTime: 5000 },
  });
}

const keyedPartitioner = Partitioners.DefaultPartitioner();

/** The partition the producer's default (Java-compatible murmur2) partitioner picks for a run's key. */
export function partitionFor(topic: string, runId: string, numPartitions: number): number {
  const partitionMetadata = Array.from({ length: numPartitions }, (_, partitionId) => ({
    partitionId,
    leader: 0,
    replicas: [0],
    isr: [0],
    partitionErrorCode: 0,
  }));
  return keyedPartitioner({ topic, partitionMetadata, message: { key: runId, value: null } });
}
