/**
 * `starpo train --durable`: submits the run to Temporal (workers must be running: `starpo worker --queue
 * all`, or rollout and update workers) and follows it, one line per completed iteration. Ctrl-C signals
 * `stop` (the run finishes its current iteration and checkpoint); a second Ctrl-C detaches, leaving the
 * run to the workers (`starpo status <run>` shows it).
 */
import type { RlConfig } from '../rl/config.ts';
import { resolveRunModel } from '../rl/run-model.ts';
import { followRun, submitRun, withClient, type SubmitOptions } from './client.ts';
import { SIGNALS, type Progress, type RunOutcome } from './protocol.ts';
import { progressPrinter } from './progress-lines.ts';

/** Submits and follows the run; resolves with its outcome, or null when the user detached. */
export async function trainDurable(
  config: RlConfig,
  o: SubmitOptions & { say?: (line: string) => void } = {},
): Promise<RunOutcome | null> {
  await resolveRunModel(config); // a bad model directory fails here, before anything is submitted
  return withClient(o, (client) => submitAndFollow(config, { ...o, client }, o.say ?? console.log));
}

async function submitAndFollow(
  config: RlConfig,
  o: SubmitOptions,
  say: (line: string) => void,
): Promise<RunOutcome | null> {
  const { handle, run } = await submitRun(config, o);
  say(
    `run ${run.runId}: submitted as workflow ${handle.workflowId}; checkpoints in ${run.storeUri}, events on Kafka ` +
      `topic ${run.events.topic ?? 'starpo.events'}`,
  );
  let detach: () => void = () => undefined;
  const detached = new Promise<null>((resolve) => {
    detach = () => resolve(null);
  });
  const onSigint = () => {
    say('stopping after the current iteration (Ctrl-C again to detach; the run keeps going on the workers)');
    void handle.signal(SIGNALS.stop);
    process.once('SIGINT', detach);
  };
  process.once('SIGINT', onSigint);
  const print = progressPrinter(say);
  try {
    const outcome = await Promise.race([followRun(handle, print), detached]);
    if (outcome === null) return null;
    print({ iterations: config.iterations, recent: outcome.recent } as Progress); // the lines the last poll missed
    say(
      `run ${run.runId}: ${outcome.stopped ? 'stopped' : 'finished'} at iteration ${outcome.lastIteration}; ` +
        `latest checkpoint ${outcome.checkpoint.lineageId}@${outcome.checkpoint.iteration}`,
    );
    return outcome;
  } finally {
    process.off('SIGINT', onSigint);
    process.off('SIGINT', detach);
  }
}
