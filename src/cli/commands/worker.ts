import type { Command } from 'commander';
import { ConfigError } from '../../errors.ts';
import { QUEUE_ROLES, type QueueRole } from '../../durable/protocol.ts';
import { PROVIDERS, type Provider, probeProvider } from '../../policy/engine/session.ts';
import { log } from '../../log.ts';
import { setHeartbeatInterval } from '../../durable/boundary.ts';

interface WorkerFlags {
  queue: string;
  rolloutQueue: string;
  updateQueue: string;
  address?: string;
  namespace: string;
  provider?: string;
  heartbeatInterval?: string;
}

/** `--heartbeat-interval <ms>`: a whole number of milliseconds, at least 100. */
export function heartbeatIntervalFlag(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Number(value);
  if (!Number.isInteger(ms) || ms < 100 || ms > 3_600_000) {
    throw new ConfigError('--heartbeat-interval', `must be whole milliseconds in [100, 3600000], got "${value}"`);
  }
  return ms;
}

/** Runs until SIGINT or SIGTERM, then lets running activities finish (a second signal exits at once). */
async function worker(flags: WorkerFlags): Promise<void> {
  if (!QUEUE_ROLES.includes(flags.queue as QueueRole)) {
    throw new ConfigError('--queue', `must be one of ${QUEUE_ROLES.join(', ')}, got "${flags.queue}"`);
  }
  if (flags.provider !== undefined && !PROVIDERS.includes(flags.provider as Provider)) {
    throw new ConfigError('--provider', `must be one of ${PROVIDERS.join(', ')}, got "${flags.provider}"`);
  }
  setHeartbeatInterval(heartbeatIntervalFlag(flags.heartbeatInterval));
  // A worker started for a GPU must not poll tasks it cannot run: check the provider before connecting.
  if (flags.provider !== undefined && flags.provider !== 'cpu') await probeProvider(flags.provider as Provider);
  // Loaded here, not at startup: Temporal's worker SDK alone takes ~0.4 s to load, which every other command paid.
  const [{ DefaultLogger, Runtime }, { startWorkers }, { createResources }] = await Promise.all([
    import('@temporalio/worker'),
    import('../../durable/worker.ts'),
    import('../../durable/resources.ts'),
  ]);
  Runtime.install({ logger: new DefaultLogger('WARN') }); // the SDK's own chatter; starpo logs through pino
  const running = await startWorkers({
    role: flags.queue as QueueRole,
    queues: { rollout: flags.rolloutQueue, update: flags.updateQueue },
    address: flags.address,
    namespace: flags.namespace,
    resources: createResources({ provider: flags.provider as Provider | undefined }),
  });
  log.info(
    {
      queue: flags.queue,
      rollout: flags.rolloutQueue,
      update: flags.updateQueue,
      provider: flags.provider ?? 'per run',
      pid: process.pid,
    },
    'worker ready',
  );
  const stop = () => {
    log.info('worker shutting down after its running activities');
    void running.shutdown();
    process.once('SIGINT', () => process.exit(130));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    await running.done;
  } finally {
    await running.resources.close();
  }
}

export function registerWorker(program: Command): void {
  program
    .command('worker')
    .description('Run a durable-driver worker: rollout (CPU, scale out), update (GPU; also runs the workflows) or all')
    .requiredOption('--queue <role>', `which task queues to poll: ${QUEUE_ROLES.join(', ')}`)
    .option('--rollout-queue <name>', 'name of the rollout task queue', 'rollout')
    .option('--update-queue <name>', 'name of the update task queue (the workflows run there too)', 'update')
    .option('--address <host:port>', 'Temporal frontend (default: the local dev server)')
    .option('--namespace <name>', 'Temporal namespace', 'default')
    .option(
      '--provider <name>',
      `execution provider of this worker's engines (${PROVIDERS.join(', ')}), overriding the run's ` +
        'rolloutProvider / updateProvider for the queues it polls',
    )
    .option(
      '--heartbeat-interval <ms>',
      "how often this worker's activities heartbeat (default: a fifth of the run's heartbeatTimeoutMs, at most " +
        'half of it)',
    )
    .action(worker);
}
