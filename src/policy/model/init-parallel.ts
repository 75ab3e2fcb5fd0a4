/**
 * initParams on several threads: the chunks of the initialisation (params.ts initPlan) are independent
 * streams, so worker threads draw some while this thread draws the rest, and the result is bit for bit
 * initParams's. Half a billion normals take ~4 s on one thread of this machine; two threads halve it.
 */
import { Worker } from 'node:worker_threads';
import type { Layout } from './layout.ts';
import { type Packed, initParams, initPlan, runInitTask } from './params.ts';

/** Below this many random values, starting workers costs more than it saves. */
export const PARALLEL_INIT_MIN = 1 << 24;

export async function initParamsParallel(layout: Layout, seed: number, threads: number): Promise<Packed> {
  const plan = initPlan(layout, seed);
  const { tasks, packed } = plan;
  const values = tasks.reduce((n, t) => n + t.end - t.start, 0);
  const workers = Math.min(threads - 1, tasks.length - 1);
  if (workers < 1 || values < PARALLEL_INIT_MIN) return initParams(layout, seed);
  const next = new Int32Array(new SharedArrayBuffer(4));
  let placed = 0;
  const pool = Array.from(
    { length: workers },
    () =>
      new Worker(new URL('./init-worker.mjs', import.meta.url), {
        workerData: { seed: plan.seed, tasks, next: next.buffer },
      }),
  );
  const finished = pool.map(
    (w) =>
      new Promise<void>((resolve, reject) => {
        w.on('message', (m: { i: number; buf: Float32Array } | { done: true }) => {
          if ('done' in m) return resolve();
          const t = tasks[m.i];
          packed[t.group].set(m.buf, t.start);
          placed++;
        });
        w.on('error', reject);
        w.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`init worker exited with code ${code}`))));
      }),
  );
  try {
    for (;;) {
      const i = Atomics.add(next, 0, 1);
      if (i >= tasks.length) break;
      runInitTask(packed[tasks[i].group], plan.seed, tasks[i]);
      placed++;
      await new Promise((resolve) => setImmediate(resolve)); // lets the workers' chunks be copied in meanwhile
    }
    await Promise.all(finished);
  } finally {
    await Promise.all(pool.map((w) => w.terminate()));
  }
  if (placed !== tasks.length) throw new Error(`initParamsParallel placed ${placed} of ${tasks.length} chunks`);
  return packed;
}
