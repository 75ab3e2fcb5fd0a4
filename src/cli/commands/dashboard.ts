import type { Command } from 'commander';
import type { ProgressSource } from '../../report/dashboard.ts';
import { nonNegativeInt, sourceFor } from './report.ts';

interface DashboardFlags {
  run: string[];
  runsDir: string;
  port: string;
  source: string;
  brokers?: string;
  topic?: string;
  pollMs: string;
  trajectoryIterations: string;
  durable?: boolean;
}

/** Live progress of a durable run from its workflow's `progress` query (iteration and stage in flight). */
const temporalProgress: ProgressSource = {
  async progress(runId) {
    const { runStatus } = await import('../../durable/client.ts');
    const { progress } = await runStatus(runId);
    return progress && { iteration: progress.iteration, iterations: progress.iterations, stage: progress.stage };
  },
};

async function dashboard(flags: DashboardFlags): Promise<void> {
  const source = await sourceFor(flags.run, flags);
  const { startDashboard } = await import('../../report/index.ts');
  const served = await startDashboard({
    source,
    port: nonNegativeInt('--port', flags.port),
    pollMs: Math.max(250, nonNegativeInt('--poll-ms', flags.pollMs)),
    trajectoryIterations: nonNegativeInt('--trajectory-iterations', flags.trajectoryIterations),
    progress: flags.durable ? temporalProgress : undefined,
  });
  console.log(`dashboard for ${source.refs.map((r) => r.runId).join(', ')} at ${served.url} (Ctrl-C stops)`);
  await new Promise<void>((resolve) => process.once('SIGINT', () => resolve()));
  await served.close();
  await source.close();
}

export function registerDashboard(program: Command): void {
  program
    .command('dashboard')
    .description('Serve the report of running runs on 127.0.0.1, refreshed as iterations complete')
    .requiredOption(
      '--run <dir-or-id>',
      'run directory or id (repeatable)',
      (v: string, acc: string[]) => [...acc, v],
      [],
    )
    .option('--runs-dir <dir>', 'where run ids are looked up', 'runs')
    .option('--port <n>', 'port on 127.0.0.1 (0 = any free one)', '8377')
    .option('--source <kind>', 'event log: local (Avro files) or kafka', 'local')
    .option('--brokers <list>', 'Kafka brokers, comma-separated (default: the local broker)')
    .option('--topic <name>', 'Kafka topic (default: starpo.events)')
    .option('--durable', 'a durable run: progress (iteration, stage) from its Temporal workflow query')
    .option('--poll-ms <ms>', 'how often the page asks for fresh data', '2000')
    .option('--trajectory-iterations <n>', 'iterations whose trajectories the page keeps, evenly spread', '12')
    .action(dashboard);
}
