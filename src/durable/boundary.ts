/**
 * The activity boundary: every activity runs inside `activity(name, fn)`, which
 * - heartbeats on a timer with the progress the activity last reported, so a worker that dies is noticed
 *   within the heartbeat timeout and a retry can read the progress back (`resumeFrom`);
 * - converts a StarpoError into `ApplicationFailure.create({ type: <class name>, nonRetryable: !retryable,
 *   details })`, so the workflow's retry policy and callers match on `type`, never on classes;
 * - warns when a result would make a large workflow-history payload (activities pass references).
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import { StarpoError } from '../errors.ts';
import { log } from '../log.ts';
import { EngineError } from '../policy/engine/engine.ts';

/** Results above this size get a warning: Temporal's hard limit is 2 MB per payload. */
export const PAYLOAD_WARN_BYTES = 256 * 1024;

export interface Beat<P> {
  /** Sets the progress the next heartbeat carries. */
  progress(details: P): void;
  /** Heartbeats now (after a step a retry must not redo). */
  now(): void;
}

export function toFailure(err: unknown): unknown {
  if (err instanceof ApplicationFailure || !(err instanceof StarpoError)) return err;
  // An engine error carries the worker-side class (e.g. ConfigError), which is what callers match on.
  const type = err instanceof EngineError ? err.remoteName : err.name;
  return ApplicationFailure.create({
    type,
    message: err.message,
    nonRetryable: !err.retryable,
    details: [{ ...err.details }],
    cause: err,
  });
}

export function warnIfLarge(name: string, value: unknown): void {
  const bytes = Buffer.byteLength(JSON.stringify(value) ?? '');
  if (bytes > PAYLOAD_WARN_BYTES)
    log.warn({ activity: name, bytes }, 'large activity payload; pass an artifact key instead');
}

let heartbeatIntervalMs: number | undefined;

/** How often this process's activities heartbeat (`starpo worker --heartbeat-interval`); undefined: the default. */
export function setHeartbeatInterval(ms: number | undefined): void {
  heartbeatIntervalMs = ms;
}

/**
 * The interval for an activity with this heartbeat timeout: a fifth of it by default (10 s → 2 s), so the
 * event loop may stall for most of the timeout before Temporal gives the activity up; never more than half.
 */
export function heartbeatEvery(timeoutMs: number): number {
  return Math.max(100, Math.min(heartbeatIntervalMs ?? timeoutMs / 5, timeoutMs / 2));
}

/** The progress the previous attempt heartbeated last, if this is a retry that got that far. */
export function resumeFrom<P>(): P | undefined {
  return Context.current().info.heartbeatDetails as P | undefined;
}

export function activity<I, O, P = unknown>(
  name: string,
  fn: (input: I, beat: Beat<P>) => Promise<O>,
): (input: I) => Promise<O> {
  return async (input: I) => {
    const ctx = Context.current();
    const { attempt, activityId, workflowExecution } = ctx.info;
    let details: P | undefined = ctx.info.heartbeatDetails as P | undefined;
    const send = () => ctx.heartbeat(details);
    // No timeout (an activity scheduled without one, or a test environment): Temporal's own default of 30 s.
    const timer = setInterval(send, heartbeatEvery(ctx.info.heartbeatTimeoutMs ?? 30_000));
    const started = performance.now();
    // The first heartbeat at once: the server hears of a retry as it starts (what recovery time is measured to).
    send();
    log.info(
      { activity: name, attempt, activityId, workflowId: workflowExecution?.workflowId, pid: process.pid },
      'activity started',
    );
    try {
      warnIfLarge(name, input);
      const out = await fn(input, {
        progress: (d) => {
          details = d;
        },
        now: send,
      });
      warnIfLarge(name, out);
      log.info({ activity: name, attempt, ms: Math.round(performance.now() - started) }, 'activity finished');
      return out;
    } catch (err) {
      log.warn({ activity: name, attempt, err: (err as Error).message }, 'activity failed');
      throw toFailure(err);
    } finally {
      clearInterval(timer);
    }
  };
}
