import type { Command } from 'commander';
import { SIGNALS, workflowIdOf } from '../../durable/protocol.ts';

type SignalName = keyof typeof SIGNALS;

const WHAT: Record<SignalName, string> = {
  pause: 'pause at the next iteration boundary',
  resume: 'continue a paused run',
  stop: 'finish the current iteration and its checkpoint, then end the run',
};

export function registerDurable(program: Command): void {
  const durable = program.command('durable').description('Control a running durable run (Temporal signals)');
  for (const name of Object.keys(SIGNALS) as SignalName[]) {
    durable
      .command(name)
      .argument('<run>', 'run id')
      .description(WHAT[name])
      .option('--address <host:port>', 'Temporal frontend (default: the local dev server)')
      .action(async (runId: string, flags: { address?: string }) => {
        const { withClient } = await import('../../durable/client.ts'); // Temporal's client, only when asked
        await withClient({ address: flags.address }, (client) =>
          client.workflow.getHandle(workflowIdOf(runId)).signal(SIGNALS[name]),
        );
        console.log(`run ${runId}: sent ${name}`);
      });
  }
}
