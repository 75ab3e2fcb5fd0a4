import { Option, type Command } from 'commander';
import { SERVICES, ourPid, serviceByName, serviceStatus, startService, stopService } from '../../services/manager.ts';
import { dataState, dataToReset, resetData, type DataState } from '../../services/data.ts';
import { ServiceError } from '../../errors.ts';
import { withServicesLock } from '../../services/lock.ts';
import { logFile } from '../../services/paths.ts';
import type { ServiceSpec } from '../../services/service.ts';
import { newTable } from '../../terminal.ts';

function selected(names: string[]): readonly ServiceSpec[] {
  return names.length === 0 ? SERVICES : names.map(serviceByName);
}

async function start(names: string[]): Promise<void> {
  const say = (line: string): void => console.log(line);
  // Started together: each is mostly waiting (JVM or Go server start-up), so they overlap well.
  const results = await withServicesLock('starpo services start', say, () =>
    Promise.allSettled(
      selected(names).map(async (spec) => {
        const outcome = await startService(spec, say);
        say(
          `${spec.name}: ${outcome} (${spec
            .ports()
            .map((p) => `127.0.0.1:${p}`)
            .join(', ')}; log ${logFile(spec.name)})`,
        );
      }),
    ),
  );
  const failures = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failures.length > 0) throw failures[0].reason;
}

async function stop(names: string[]): Promise<void> {
  const say = (line: string): void => console.log(line);
  await withServicesLock('starpo services stop', say, async () => {
    for (const spec of selected(names)) say(`${spec.name}: ${await stopService(spec)}`);
  });
}

const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

/** The data column of `services status`: kept since when and how much, none yet, or what vanished. */
export function describeData(state: DataState): string {
  if (state.kind === 'none') return 'none yet';
  if (state.kind === 'kept') return `kept since ${state.createdAt} (${mib(state.bytes)})`;
  return `VANISHED: ${state.missing} ${state.why === 'missing' ? 'is gone' : 'was re-formatted'}`;
}

/**
 * Deletes the named services' data (all three without names), only with --yes; without it, says what would be
 * deleted and exits 1. A running service is refused: stop it first.
 */
export async function reset(
  names: string[],
  opts: { yes?: boolean },
  say: (line: string) => void = console.log,
): Promise<void> {
  const specs = selected(names);
  const running = specs.filter((s) => ourPid(s) !== null).map((s) => s.name);
  if (running.length > 0)
    throw new ServiceError(running[0]!, `is running; stop it first: starpo services stop ${running.join(' ')}`);
  const doomed = specs.flatMap((spec) =>
    dataToReset(spec).map((d) => ({ spec, line: `${spec.name}: ${d.path} (${mib(d.bytes)})` })),
  );
  if (!opts.yes) {
    for (const d of doomed) say(`would delete ${d.line}`);
    const command = ['starpo services reset', ...names, '--yes'].join(' ');
    const why = doomed.length === 0 ? 'no data to delete' : `the data above is deleted for good only by \`${command}\``;
    throw new ServiceError(specs.map((s) => s.name).join(' '), why, { retryable: false });
  }
  for (const spec of specs) {
    resetData(spec);
    say(`${spec.name}: data deleted; the next start begins empty`);
  }
}

async function status(names: string[], opts: { json?: boolean }): Promise<void> {
  const rows = await Promise.all(
    selected(names).map(async (spec) => ({ ...(await serviceStatus(spec)), data: dataState(spec) })),
  );
  if (opts.json) {
    for (const row of rows) console.log(JSON.stringify(row));
    return;
  }
  const table = newTable(['service', 'state', 'pid', 'address', 'data', 'log']);
  for (const r of rows) {
    const state = r.ready
      ? r.pid !== null
        ? 'ready'
        : 'ready (not started by starpo)'
      : r.pid !== null
        ? 'starting/unhealthy'
        : 'stopped';
    const address = r.ports.map((p) => `127.0.0.1:${p}`).join(' ');
    table.push([r.name, state, r.pid ?? '-', address, describeData(r.data), logFile(r.name)]);
  }
  console.log(table.toString());
}

export function registerServices(program: Command): void {
  const services = program
    .command('services')
    .description('Start, stop and inspect the local Temporal, Kafka and S3 services');
  services
    .command('start')
    .argument('[names...]', 'temporal, kafka, s3 (default: all)')
    // Every start keeps the data now; the old flag is accepted so scripts that pass it still work.
    .addOption(new Option('--keep-data').hideHelp())
    .description(
      'Install (first time, cached under .cache/) and start the services; idempotent. Data is always kept ' +
        '(wipe it with `services reset`); a service whose data vanished is refused',
    )
    .action((names: string[]) => start(names));
  services
    .command('reset')
    .argument('[names...]', 'temporal, kafka, s3 (default: all)')
    .option('--yes', 'really delete; without it, reset only lists what it would delete')
    .description("Delete the services' data for good (durable runs' events, checkpoints, workflow histories)")
    .action((names: string[], opts: { yes?: boolean }) => reset(names, opts));
  services
    .command('stop')
    .argument('[names...]', 'temporal, kafka, s3 (default: all)')
    .description('Stop the services that starpo started (by pid file)')
    .action(stop);
  services
    .command('status')
    .argument('[names...]', 'temporal, kafka, s3 (default: all)')
    .option('--json', 'one JSON line per service')
    .description('Show whether each service is running and answering requests')
    .action(status);
}
