import type { Command } from 'commander';
import type { RunStatus } from '../../durable/index.ts';
import { summaryLine } from '../../durable/progress-lines.ts';

/** Human lines for a durable run's status (the workflow's state, then its progress query). */
export function statusLines(runId: string, s: RunStatus): string[] {
  const p = s.progress;
  if (!p) return [`run ${runId}: workflow ${s.workflowId} ${s.status} (no progress: no worker answered the query)`];
  const flags = [p.paused && 'paused', p.stopping && 'stopping'].filter(Boolean).join(', ');
  return [
    `run ${runId}: workflow ${s.workflowId} ${s.status}; lineage ${p.lineageId}; ` +
      `iteration ${p.iteration}/${p.iterations}; ` +
      `stage ${p.stage}${flags ? ` (${flags})` : ''}`,
    ...p.recent.map((r) => `  ${summaryLine(r, p.iterations)}`),
  ];
}

export function registerStatus(program: Command): void {
  program
    .command('status')
    .argument('<run>', 'run id of a durable run')
    .description("Show a durable run's progress (from the workflow's progress query)")
    .option('--json', 'one JSON object instead of text')
    .option('--address <host:port>', 'Temporal frontend (default: the local dev server)')
    .action(async (runId: string, flags: { json?: boolean; address?: string }) => {
      const { runStatus } = await import('../../durable/index.ts'); // Temporal's client, only when asked
      const s = await runStatus(runId, { address: flags.address });
      for (const line of flags.json ? [JSON.stringify(s)] : statusLines(runId, s)) console.log(line);
    });
}
