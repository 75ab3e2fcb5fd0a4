/**
 * A thread of initParamsParallel: takes chunks off the shared counter, draws each into its own buffer
 * and transfers it to the parent, which copies it into place (onnxruntime-node does not take tensors
 * over SharedArrayBuffers, so the packed buffers stay ordinary ones that only the parent writes).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type InitTask, runInitTask } from './params.ts';

const { seed, tasks, next } = workerData as { seed: number; tasks: InitTask[]; next: SharedArrayBuffer };
const counter = new Int32Array(next);
for (;;) {
  const i = Atomics.add(counter, 0, 1);
  if (i >= tasks.length) break;
  const t = tasks[i];
  const buf = new Float32Array(t.end - t.start);
  runInitTask(buf, seed, { ...t, start: 0, end: buf.length });
  parentPort!.postMessage({ i, buf }, [buf.buffer]);
}
parentPort!.postMessage({ done: true });
