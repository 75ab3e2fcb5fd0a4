/**
 * A full run checkpoint of a real model (weights and AdamW moments: 1.6 GB for SmolLM2-135M-Instruct) saved to a
 * local checkpoint store and loaded back, as both drivers do every checkpoint and on every resume. One JSON line per
 * round: seconds to save and to load, the garbage collector's share of each, the bytes the checkpoint holds, and the
 * load average. Run it on two commits to compare them (the script uses only APIs both have).
 *
 *   node --import tsx scripts/bench-checkpoint.ts [model-dir] [rounds]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';

const [modelDir = '.cache/models/smollm2-135m-instruct/hf', roundsArg = '3'] = process.argv.slice(2);
const rounds = Number(roundsArg);
if (!Number.isInteger(rounds) || rounds < 1) {
  console.error(`bench-checkpoint: rounds must be a whole number ≥ 1, not "${roundsArg}"`);
  process.exit(2);
}
const { openModelDirectory } = await import('../src/policy/io/model-dir.ts');
const { readModelWeights } = await import('../src/policy/io/sharded.ts');
const { Policy } = await import('../src/policy/engine/policy.ts');
const { importState } = await import('../src/policy/engine/state.ts');
const { saveRunCheckpoint, loadRunCheckpoint } = await import('../src/run/checkpoint.ts');
const { createLocalCheckpointStore } = await import('../src/storage/index.ts');

let gcMs = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcMs += e.duration;
}).observe({ entryTypes: ['gc'] });

const model = await openModelDirectory(modelDir).catch((err: Error) => {
  console.error(`bench-checkpoint: ${err.message}`);
  process.exit(2);
});
const policy = new Policy({ config: model.config, seed: 0, threads: 2 });
importState(policy, { weights: await readModelWeights(model.dir), optimizer: null, step: 0 });
// One step, so the checkpoint carries AdamW's moments as a trained one does.
const T = 16;
await policy.trainStep(
  {
    batch: 1,
    seqLen: T,
    tokens: Int32Array.from({ length: T }, (_, i) => 100 + i),
    attentionMask: new Float32Array(T).fill(1),
    lossMask: new Float32Array(T).fill(1),
  },
  { loss: { kind: 'sft', aggregation: 'token-mean' }, lr: 1e-5 },
);
const root = mkdtempSync(join(os.tmpdir(), 'starpo-bench-checkpoint-'));
const store = createLocalCheckpointStore({ root });
const seconds = (ms: number) => Math.round(ms) / 1000;
try {
  for (let round = 1; round <= rounds; round++) {
    const id = { runId: 'r', lineageId: 'main', iteration: round };
    gcMs = 0;
    let t = performance.now();
    const saved = await saveRunCheckpoint(store, id, { actor: policy }, model.config, model.assets, {
      iteration: round,
      echoTrap: null,
    });
    const [saveMs, saveGcMs] = [performance.now() - t, gcMs];
    gcMs = 0;
    t = performance.now();
    await loadRunCheckpoint(store, id, { actor: policy });
    const [loadMs, loadGcMs] = [performance.now() - t, gcMs];
    console.log(
      JSON.stringify({
        bench: 'checkpoint',
        round,
        gigabytes: Math.round(saved.totalBytes / 1e7) / 100,
        saveSeconds: seconds(saveMs),
        saveGcSeconds: seconds(saveGcMs),
        loadSeconds: seconds(loadMs),
        loadGcSeconds: seconds(loadGcMs),
        loadAverage: os.loadavg().map((x) => Math.round(x * 100) / 100),
      }),
    );
  }
} finally {
  rmSync(root, { recursive: true, force: true });
  await policy.close();
}
