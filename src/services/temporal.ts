import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ServiceSpec } from './service.ts';
import { CACHE_DIR, serviceDir } from './paths.ts';
import { endpoints } from '../endpoints.ts';
import { runToLog } from './exec.ts';

// Later tags carry a replace directive that `go install` refuses (docs/design.md, Services).
const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal@v1.5.1';
const binary = join(CACHE_DIR, 'bin', 'temporal');
const GO_INSTALL_ATTEMPTS = 3;

/** Temporal dev server (temporal CLI built from the Go module proxy) with a SQLite file that survives restarts. */
export const temporalService: ServiceSpec = {
  name: 'temporal',
  description: 'Temporal dev server (SQLite-persisted)',
  ports: () => [endpoints.temporal.port],
  prerequisites: ['go'],
  readyTimeoutMs: 60_000,
  processMarker: 'start-dev',
  isInstalled: () => existsSync(binary),
  async install(log) {
    log(`building the temporal CLI: go install ${TEMPORAL_CLI_MODULE} (first time only, a few minutes)`);
    mkdirSync(join(CACHE_DIR, 'logs'), { recursive: true });
    const env = {
      GOPATH: join(CACHE_DIR, 'go'),
      GOBIN: join(CACHE_DIR, 'bin'),
      GOCACHE: join(CACHE_DIR, 'go-build'),
      GOFLAGS: '-modcacherw',
    };
    const logPath = join(CACHE_DIR, 'logs', 'go-install.log');
    // ~200 modules from the proxy: one refused or reset download fails the whole install, and a rerun resumes from
    // the module cache, so a transient fault costs a retry rather than the run.
    for (let attempt = 1; ; attempt++) {
      try {
        await runToLog('temporal', 'go', ['install', TEMPORAL_CLI_MODULE], logPath, env);
        return;
      } catch (err) {
        if (attempt === GO_INSTALL_ATTEMPTS) throw err;
        log(`go install failed (attempt ${attempt} of ${GO_INSTALL_ATTEMPTS}); retrying in ${attempt * 10} s`);
        await new Promise((r) => setTimeout(r, attempt * 10_000));
      }
    }
  },
  dataPaths: () => [join(serviceDir('temporal'), 'temporal.sqlite')],
  async prepare() {
    const dir = serviceDir('temporal');
    mkdirSync(dir, { recursive: true });
    return {
      command: binary,
      args: [
        'server',
        'start-dev',
        '--headless',
        '--ip',
        '127.0.0.1',
        '--port',
        String(endpoints.temporal.port),
        '--db-filename',
        join(dir, 'temporal.sqlite'),
        '--log-level',
        'warn',
      ],
    };
  },
  async isReady() {
    // Loaded here, not at every CLI start (0.3 s).
    const { Connection } = await import('@temporalio/client');
    const connection = await Connection.connect({ address: endpoints.temporal.address, connectTimeout: 1000 });
    try {
      // The dev server registers the default namespace a moment after the port opens.
      await connection.workflowService.describeNamespace({ namespace: 'default' });
      return true;
    } finally {
      await connection.close();
    }
  },
};
