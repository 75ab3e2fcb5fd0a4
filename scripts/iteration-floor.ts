/**
 * A run's iterations read against the machine's arithmetic: per iteration and stage (rollout, score, update), the
 * model FLOPs the stage could not do without (src/bench/iteration-flops.ts), the least time they take at the MatMul
 * peak (the floor), the time the stage took (its IterationEvent's stage timings) and the rate that is. JSON lines.
 * The peak is measured first in this process (onnxruntime's best fp32 product on `threads` threads, as bench scale
 * measures it) unless given in GFLOP/s.
 *
 *   node --import tsx scripts/iteration-floor.ts <run directory> [peak GFLOP/s] [threads]
 */
import { basename, dirname } from 'node:path';
import { matmulPeak } from '../src/bench/engine.ts';
import { runIterationFlops } from '../src/bench/run-flops.ts';
import { readRunConfig, runLocation } from '../src/run/location.ts';

const refuse = (message: string): never => {
  console.error(`iteration-floor: ${message}`);
  process.exit(2);
};
const [runDir, peakArg, threadsArg] = process.argv.slice(2);
if (!runDir) refuse('usage: iteration-floor.ts <run directory> [peak GFLOP/s] [threads]');
if (peakArg !== undefined && !(Number(peakArg) > 0)) refuse(`the peak must be GFLOP/s above 0, not "${peakArg}"`);
const loc = runLocation(basename(runDir), dirname(runDir));
const c = await readRunConfig(loc).catch((err: Error) => refuse(err.message));
const peak = peakArg ? Number(peakArg) : (await matmulPeak(Number(threadsArg ?? 2))).wall;
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
const STAGES = ['rollout', 'score', 'update'] as const;
for (const { event, trajectories, flops } of await runIterationFlops(loc.root, loc.runId, c)) {
  const stages = Object.fromEntries(
    STAGES.map((stage) => {
      const seconds = (event.stageTimingsMs[stage] ?? 0) / 1000;
      const floor = flops[stage] / (peak * 1e9);
      return [
        stage,
        {
          tflop: round(flops[stage] / 1e12, 2),
          floorSeconds: round(floor),
          seconds: round(seconds),
          ofPeak: round(seconds > 0 ? floor / seconds : 0, 2),
        },
      ];
    }),
  );
  const total = STAGES.reduce((s, k) => s + flops[k], 0);
  console.log(
    JSON.stringify({
      bench: 'iteration-floor',
      run: loc.runId,
      iteration: event.iteration,
      peakGflops: round(peak),
      trajectories: trajectories.length,
      tokens: trajectories.reduce((n, t) => n + t.tokenIds.length, 0),
      stages,
      floorSeconds: round(total / (peak * 1e9)),
    }),
  );
}
