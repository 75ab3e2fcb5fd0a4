import type { Command } from 'commander';
import { SERVICES, serviceByName, serviceStatus, startService, stopService } from '../../services/manager.ts';
import { withServicesLock } from '../../services/lock.ts';
import { logFile } from '../../services/paths.ts';
import type { ServiceSpec } from '../../services/service.ts';
import { newTable } from '../../terminal.ts';

function selected(names: string[]): readonly ServiceSpec[] {
  return names.length === 0 ? SERVICES : names.map(serviceByName);
}

async function start(names: string[], opts: { keepData?: boolean }): Promise<void> {
  const say = (line: string): void => console.log(line);
  // Started together: each is mostly waiting (JVM or Go server start-up), so they overlap well.
  const results = await withServicesLock('starpo services start', say, () =>
    Promise.allSettled(
      selected(names).map(async (spec) => {
        const outcome = await startService(spec, { keepData: opts.keepData ?? false }, say);
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

async function status(names: string[], opts: { json?: boolean }): Promise<void> {
  const rows = await Promise.all(selected(names).map(serviceStatus));
  if (opts.json) {
    for (const row of rows) console.log(JSON.stringify(row));
    return;
  }
  const table = newTable(['service', 'state', 'pid', 'address', 'log']);
  for (const r of rows) {
    const state = r.ready
      ? r.pid !== null
        ? 'ready'
        : 'ready (not started by starpo)'
      : r.pid !== null
        ? 'starting/unhealthy'
        : 'stopped';
    table.push([r.name, state, r.pid ?? '-', r.ports.map((p) => `127.0.0.1:${p}`).join(' '), logFile(r.name)]);
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
    .option('--keep-data', 'keep the Kafka data directory instead of starting fresh')
    .description('Install (first time, cached under .cache/) and start the services; idempotent')
    .action(start);
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
