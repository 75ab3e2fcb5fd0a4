import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ServiceSpec } from './service.ts';
import { CACHE_DIR, serviceDir, serviceTmpDir } from './paths.ts';
import { endpoints } from '../endpoints.ts';
import { runToLog } from './exec.ts';

export const S3MOCK_VERSION = '4.12.4';
const jar = join(CACHE_DIR, 's3mock', `s3mock-${S3MOCK_VERSION}-exec.jar`);

/** Adobe S3Mock (exec jar from Maven Central) with a persistent root directory. */
export const s3Service: ServiceSpec = {
  name: 's3',
  description: `S3Mock ${S3MOCK_VERSION} (S3-compatible storage)`,
  ports: () => [endpoints.s3.port, endpoints.s3.extraPort],
  prerequisites: ['java', 'mvn'],
  readyTimeoutMs: 90_000,
  processMarker: 's3mock',
  isInstalled: () => existsSync(jar),
  async install(log) {
    log(`fetching S3Mock ${S3MOCK_VERSION} from Maven Central (first time only)`);
    mkdirSync(join(CACHE_DIR, 'logs'), { recursive: true });
    await runToLog(
      's3',
      'mvn',
      [
        '-B',
        '-q',
        `-Dmaven.repo.local=${join(CACHE_DIR, 'm2')}`,
        'dependency:copy',
        `-Dartifact=com.adobe.testing:s3mock:${S3MOCK_VERSION}:jar:exec`,
        `-DoutputDirectory=${join(CACHE_DIR, 's3mock')}`,
      ],
      join(CACHE_DIR, 'logs', 'mvn-s3mock.log'),
    );
  },
  dataPaths: () => [join(serviceDir('s3'), 'root')],
  async prepare() {
    const root = join(serviceDir('s3'), 'root');
    mkdirSync(root, { recursive: true });
    return {
      command: 'java',
      args: [
        '-Xms128m',
        '-Xmx512m',
        '-XX:TieredStopAtLevel=1',
        '-XX:+UseSerialGC',
        '-Djava.awt.headless=true',
        `-Djava.io.tmpdir=${serviceTmpDir('s3')}`,
        '-jar',
        jar,
        // Plain HTTP on the loopback-bound main connector; S3Mock cannot bind its extra connector to one address.
        '--server.address=127.0.0.1',
        '--server.ssl.enabled=false',
        `--server.port=${endpoints.s3.port}`,
        `--com.adobe.testing.s3mock.httpPort=${endpoints.s3.extraPort}`,
        `--com.adobe.testing.s3mock.store.root=${root}`,
        '--com.adobe.testing.s3mock.store.retainFilesOnExit=true',
        '--spring.main.banner-mode=off',
      ],
    };
  },
  async isReady() {
    const res = await fetch(`${endpoints.s3.endpoint}/`, { signal: AbortSignal.timeout(2000) });
    return res.ok;
  },
};
