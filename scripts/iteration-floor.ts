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
import { iterationFlops, packsPrefixes } from '../src/bench/iteration-flops.ts';
import { replay, type IterationEvent, type TrajectoryEvent } from '../src/events/index.ts';
import { ACTOR_NO_SIGNAL } from '../src/rl/metric-names.ts';
import { resolveRunModel } from '../src/rl/run-model.ts';
import { localRunEvents, readRunConfig, runLocation } from '../src/run/location.ts';

const [runDir, peakArg, threadsArg] = process.argv.slice(2);
if (!runDir) throw new Error('usage: iteration-floor.ts <run directory> [peak GFLOP/s] [threads]');
const loc = runLocation(basename(runDir), dirname(runDir));
const c = await readRunConfig(loc);
const { modelConfig: model } = await resolveRunModel(c);
const packed = packsPrefixes(c, model);
const peak = peakArg ? Number(peakArg) : (await matmulPeak(Number(threadsArg ?? 2))).wall;

const iterations = new Map<number, IterationEvent>();
const played = new Map<number, TrajectoryEvent[]>();
for await (const e of replay(localRunEvents(loc.root), loc.runId)) {
  if (e.kind === 'iteration') iterations.set(e.iteration, e);
  if (e.kind === 'trajectory' && e.split === 'train') played.set(e.iteration, [...(played.get(e.iteration) ?? []), e]);
}
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
for (const [iteration, it] of [...iterations].sort(([a], [b]) => a - b)) {
  const trajectories = (played.get(iteration) ?? []).sort(
    (a, b) => a.group - b.group || a.rolloutIndex - b.rolloutIndex,
  );
  const flops = iterationFlops({
    model,
    config: c,
    trajectories,
    packed,
    actorSkipped: it.metrics[ACTOR_NO_SIGNAL] === 1,
  });
  const stages = Object.fromEntries(
    (['rollout', 'score', 'update'] as const).map((stage) => {
      const seconds = (it.stageTimingsMs[stage] ?? 0) / 1000;
      const tflop = flops[stage] / 1e12;
      const floor = flops[stage] / (peak * 1e9);
      return [
        stage,
        {
          tflop: round(tflop, 2),
          floorSeconds: round(floor),
          seconds: round(seconds),
          ofPeak: round(seconds > 0 ? floor / seconds : 0, 2),
        },
      ];
    }),
  );
  const total = (['rollout', 'score', 'update'] as const).reduce((s, k) => s + flops[k], 0);
  console.log(
    JSON.stringify({
      bench: 'iteration-floor',
      run: loc.runId,
      iteration,
      peakGflops: round(peak),
      packed,
      trajectories: trajectories.length,
      tokens: trajectories.reduce((n, t) => n + t.tokenIds.length, 0),
      stages,
      floorSeconds: round(total / (peak * 1e9)),
    }),
  );
}
