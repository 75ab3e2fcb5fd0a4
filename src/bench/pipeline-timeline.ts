/**
 * Where a durable run's time went, read from its workflow history (for `starpo bench pipeline`): every
 * activity's span (scheduled, started, completed; its queue and iteration), when each iteration finished
 * (its publish activity), and how much of a window each queue's workers spent executing activities.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/client';

export interface ActivitySpan {
  type: string;
  queue: string;
  iteration: number | null;
  scheduledMs: number;
  startedMs: number;
  completedMs: number;
}

type Stamp = { seconds?: unknown; nanos?: number | null } | null | undefined;
const millis = (t: Stamp): number => Number(t?.seconds ?? 0) * 1000 + (t?.nanos ?? 0) / 1e6;

/** Every completed activity of the workflow run, in scheduling order. */
export async function activitySpans(handle: WorkflowHandle): Promise<ActivitySpan[]> {
  const events = (await handle.fetchHistory()).events ?? [];
  const scheduled = new Map<string, ActivitySpan>();
  const out: ActivitySpan[] = [];
  for (const e of events) {
    const id = String(e.eventId);
    const s = e.activityTaskScheduledEventAttributes;
    if (s) {
      const payload = s.input?.payloads?.[0];
      const input = payload ? defaultPayloadConverter.fromPayload<{ iteration?: number }>(payload) : {};
      scheduled.set(id, {
        type: s.activityType?.name ?? '?',
        queue: s.taskQueue?.name ?? '?',
        iteration: input.iteration ?? null,
        scheduledMs: millis(e.eventTime),
        startedMs: NaN,
        completedMs: NaN,
      });
    }
    const st = e.activityTaskStartedEventAttributes;
    if (st) scheduled.get(String(st.scheduledEventId))!.startedMs = millis(e.eventTime);
    const done = e.activityTaskCompletedEventAttributes;
    if (done) {
      const span = scheduled.get(String(done.scheduledEventId))!;
      span.completedMs = millis(e.eventTime);
      out.push(span);
    }
  }
  return out.sort((a, b) => a.scheduledMs - b.scheduledMs);
}

/** The publish activity's type, and its name in histories from before 2026-12-06. */
const PUBLISH_TYPES = new Set(['publish', 'checkpoint']);

/** When each iteration was published (its publish activity completed). */
export function iterationEnds(spans: readonly ActivitySpan[]): Map<number, number> {
  return new Map(
    spans.filter((s) => PUBLISH_TYPES.has(s.type) && s.iteration !== null).map((s) => [s.iteration!, s.completedMs]),
  );
}

/** Milliseconds of [from, to] during which at least one of `spans` was executing. */
export function busyMs(spans: readonly ActivitySpan[], from: number, to: number): number {
  const cut = spans
    .map((s) => [Math.max(from, s.startedMs), Math.min(to, s.completedMs)] as const)
    .filter(([a, b]) => b > a)
    .sort((x, y) => x[0] - y[0]);
  let busy = 0;
  let reach = from;
  for (const [a, b] of cut) {
    busy += Math.max(0, b - Math.max(a, reach));
    reach = Math.max(reach, b);
  }
  return busy;
}

/** Per activity type, the median over iterations `iterations` of that iteration's summed execution time. */
export function activityMedians(spans: readonly ActivitySpan[], iterations: readonly number[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const type of [...new Set(spans.map((s) => s.type))]) {
    const per = iterations.map((i) =>
      spans
        .filter((s) => s.type === type && s.iteration === i)
        .reduce((sum, s) => sum + (s.completedMs - s.startedMs), 0),
    );
    if (per.some((x) => x > 0)) out[type] = Math.round(median(per));
  }
  return out;
}

/** Per activity type, the median wait between scheduling and a worker starting it (Temporal dispatch, a busy queue). */
export function dispatchMedians(spans: readonly ActivitySpan[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const type of [...new Set(spans.map((s) => s.type))]) {
    out[type] = Math.round(median(spans.filter((s) => s.type === type).map((s) => s.startedMs - s.scheduledMs)));
  }
  return out;
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}
