import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import type { ServiceSpec } from './service.ts';
import { CACHE_DIR, REPO_ROOT, serviceDir, serviceTmpDir } from './paths.ts';
import { endpoints } from '../endpoints.ts';
import { runToLog } from './exec.ts';
import { ServiceError } from '../errors.ts';

export const KAFKA_VERSION = '3.9.1';
const libs = join(CACHE_DIR, 'kafka', 'libs');
const classpath = `${libs}/*`;

function renderProperties(dataDir: string): string {
  const template = readFileSync(join(REPO_ROOT, 'infra/kafka/server.properties'), 'utf8');
  const values: Record<string, string> = {
    BROKER_PORT: String(endpoints.kafka.port),
    CONTROLLER_PORT: String(endpoints.kafka.controllerPort),
    DATA_DIR: dataDir,
  };
  return template.replace(/\$\{(\w+)\}/g, (_, key: string) => values[key] ?? '');
}

/** Formats a KRaft log dir once; a kept data dir already carries its meta.properties. */
function formatStorage(propsPath: string, dataDir: string): void {
  if (existsSync(join(dataDir, 'meta.properties'))) return;
  const clusterId = randomBytes(16).toString('base64url');
  const r = spawnSync(
    'java',
    ['-cp', classpath, 'kafka.tools.StorageTool', 'format', '-t', clusterId, '-c', propsPath],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new ServiceError('kafka', `storage format failed: ${r.stderr || r.stdout}`);
}

const dataDir = (): string => join(serviceDir('kafka'), 'data');

/** Single-node Kafka (KRaft) from Maven Central jars; its log directory is kept across starts (data.ts). */
export const kafkaService: ServiceSpec = {
  name: 'kafka',
  description: `Kafka ${KAFKA_VERSION} broker (KRaft, single node)`,
  ports: () => [endpoints.kafka.port, endpoints.kafka.controllerPort],
  prerequisites: ['java', 'mvn'],
  readyTimeoutMs: 90_000,
  processMarker: 'kafka.Kafka',
  isInstalled: () => existsSync(join(libs, `kafka_2.13-${KAFKA_VERSION}.jar`)),
  async install(log) {
    log(`fetching Kafka ${KAFKA_VERSION} jars from Maven Central (first time only)`);
    mkdirSync(join(CACHE_DIR, 'logs'), { recursive: true });
    await runToLog(
      'kafka',
      'mvn',
      [
        '-B',
        '-q',
        `-Dmaven.repo.local=${join(CACHE_DIR, 'm2')}`,
        '-f',
        join(REPO_ROOT, 'infra/maven/kafka-pom.xml'),
        'dependency:copy-dependencies',
        `-DoutputDirectory=${libs}`,
      ],
      join(CACHE_DIR, 'logs', 'mvn-kafka.log'),
    );
  },
  dataPaths: () => [dataDir()],
  async prepare() {
    const dir = serviceDir('kafka');
    mkdirSync(dataDir(), { recursive: true });
    const propsPath = join(dir, 'server.properties');
    writeFileSync(propsPath, renderProperties(dataDir()));
    formatStorage(propsPath, dataDir());
    return {
      command: 'java',
      args: [
        '-Xms256m',
        '-Xmx768m',
        '-XX:+UseG1GC',
        '-XX:TieredStopAtLevel=1',
        '-Djava.awt.headless=true',
        `-Djava.io.tmpdir=${serviceTmpDir('kafka')}`,
        `-Dlog4j.configuration=file:${join(REPO_ROOT, 'infra/kafka/log4j.properties')}`,
        '-cp',
        classpath,
        'kafka.Kafka',
        propsPath,
      ],
    };
  },
  async isReady() {
    const kafka = new Kafka({
      clientId: 'starpo-probe',
      brokers: endpoints.kafka.brokers,
      logLevel: logLevel.NOTHING,
      connectionTimeout: 1000,
      requestTimeout: 2000,
      retry: { retries: 0 },
    });
    const admin = kafka.admin();
    try {
      await admin.connect();
      const cluster = await admin.describeCluster();
      return cluster.brokers.length > 0 && cluster.controller !== null;
    } finally {
      await admin.disconnect();
    }
  },
};
