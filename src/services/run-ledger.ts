/**
 * Which durable runs keep their data in a local service: `train --durable` (submitRun) adds a run to the
 * ledger of each local service it uses, so that when a service's data vanishes `services start` and `doctor`
 * can name the runs that lost it. The ledger sits beside the service's data record, outside the data itself
 * (which is what may vanish); a reset clears it with the data. Runs on remote services are not listed.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { endpoints } from '../endpoints.ts';
import { serviceDir } from './paths.ts';

type DataService = 'kafka' | 's3';

const ledgerPath = (service: DataService): string => join(serviceDir(service), 'runs.jsonl');

/** Adds the run to the service's ledger (once: a run already listed is not added again). */
export function recordRunOn(service: DataService, runId: string, now = new Date()): void {
  if (runsOn(service).includes(runId)) return;
  mkdirSync(serviceDir(service), { recursive: true });
  appendFileSync(ledgerPath(service), `${JSON.stringify({ runId, at: now.toISOString() })}\n`);
}

/** The runs listed for the service, oldest first; lines a crash cut short are skipped. */
export function runsOn(service: DataService): string[] {
  const path = ledgerPath(service);
  if (!existsSync(path)) return [];
  const runs = new Set<string>();
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    try {
      const { runId } = JSON.parse(line) as { runId?: unknown };
      if (typeof runId === 'string') runs.add(runId);
    } catch {
      // a torn last line, or an empty one
    }
  }
  return [...runs];
}

export function forgetRuns(service: DataService): void {
  rmSync(ledgerPath(service), { force: true });
}

/** The local services a run's events and store live in: the default brokers and an s3:// store on the local S3. */
export function localDataServices(events: { brokers?: readonly string[] }, storeUri: string): DataService[] {
  const out: DataService[] = [];
  const localKafka = process.env.STARPO_KAFKA_BROKERS?.trim() ? undefined : endpoints.kafka.brokers.join(',');
  if (localKafka !== undefined && (events.brokers ?? endpoints.kafka.brokers).join(',') === localKafka)
    out.push('kafka');
  if (storeUri.startsWith('s3://') && !process.env.STARPO_S3_ENDPOINT?.trim()) out.push('s3');
  return out;
}
