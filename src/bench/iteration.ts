/**
 * `starpo bench iteration`: one RL iteration of a real model (SmolLM2-135M-Instruct) at RAGEN's batch, 8 groups ×
 * 16, as a user's run makes it: embedded driver, StarPO-S, the environment's default prompt, 2 threads, the
 * collapse metrics on their default schedule, a checkpoint after the iteration. Per case, two iterations: the first
 * compiles and fills the caches and is reported apart; the second's wall-clock (from the first's report to its own,
 * so its checkpoint and everything between count, validation excepted), plus the collapse probe's share of an
 * iteration on its schedule (the first iteration's probe over collapseEvery), is compared with the target, with its
 * stage split and the load average before and after. Targets: Bandit ≤ 30 s with LoRA and ≤ 60 s full, Sokoban
 * (5 turns) ≤ 3 min. STARPO_BENCH_SET overrides every case's config (e.g.
 * `rolloutWeights=int8,offPolicyCorrection=tis`).
 * Beside each stage's time, its floor: the model FLOPs the second iteration's stage could not do without
 * (iteration-flops.ts) at this machine's fp32 MatMul peak, measured first (`matmul_peak`) — how far the engine is
 * from the arithmetic, and whether a target is below what the arithmetic allows at all.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { trainEmbedded } from '../embedded/driver.ts';
import { resolveConfig } from '../rl/config.ts';
import { KEPT_TOKENS, TOKENS_GENERATED } from '../rl/metric-names.ts';
import { matmulPeak } from './engine.ts';
import type { IterationFlops } from './iteration-flops.ts';
import { runIterationFlops } from './run-flops.ts';
import { benchSetOverrides } from './learning.ts';
import { pickNames } from './name-list.ts';

interface IterationCase {
  readonly overrides: readonly string[];
  readonly targetSeconds: number;
}

const LORA = ['loraRank=16', 'loraAlpha=32'];
export const ITERATION_CASES: Readonly<Record<string, IterationCase>> = {
  'bandit-lora': { overrides: ['env=bandit', ...LORA], targetSeconds: 30 },
  'bandit-full': { overrides: ['env=bandit'], targetSeconds: 60 },
  'sokoban-lora': { overrides: ['env=sokoban', 'maxTurns=5', ...LORA], targetSeconds: 180 },
  'sokoban-full': { overrides: ['env=sokoban', 'maxTurns=5'], targetSeconds: 180 },
};
const DEFAULT_CASES = ['bandit-lora', 'bandit-full', 'sokoban-lora'];

const round = (x: number, d = 10) => Math.round(x * d) / d;
const load = () => round(loadavg()[0], 100);

/** `peakGflops`: the MatMul peak to read the floors against, instead of measuring it (tests). */
export async function benchIteration(
  opts: { cases?: string; peakGflops?: number } = {},
  write = console.log,
): Promise<void> {
  const names = opts.cases
    ? pickNames('cases', 'iteration cases', opts.cases, Object.keys(ITERATION_CASES))
    : DEFAULT_CASES;
  const extra = benchSetOverrides();
  const configs = names.map((name) =>
    resolveConfig({
      preset: 'starpo-s',
      overrides: [
        'model=smollm2-135m-instruct',
        'envGroups=8',
        'groupSize=16',
        'iterations=2',
        'threads=2',
        'valEvery=0',
        'valSeeds=8', // a run validates at its end; the measurement leaves validation out, so keep it short
        ...ITERATION_CASES[name].overrides,
        ...extra,
      ],
    }),
  ); // every case's config checked before the first runs
  const peakGflops = opts.peakGflops ?? (await matmulPeak(configs[0].threads)).wall;
  for (const [i, name] of names.entries()) {
    const root = mkdtempSync(join(tmpdir(), `starpo-bench-iteration-${name}-`));
    const loads = [load()];
    const reports: { at: number; timingsMs: Record<string, number>; metrics: Record<string, number> }[] = [];
    const start = performance.now();
    let flops: IterationFlops;
    try {
      await trainEmbedded({
        root,
        runId: name,
        config: configs[i],
        onIteration: (r) => reports.push({ at: performance.now(), timingsMs: r.timingsMs, metrics: r.metrics }),
      });
      flops = (await runIterationFlops(root, name, configs[i]))[1].flops; // the second iteration, measured below
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
    loads.push(load());
    const [first, second] = reports;
    const stages = (ms: Record<string, number>) =>
      Object.fromEntries(Object.entries(ms).map(([k, v]) => [k, round(v / 1000)]));
    const validateMs = second.timingsMs.validate ?? 0;
    const seconds = (second.at - first.at - validateMs) / 1000;
    // The collapse probe runs at iteration 1 and every collapseEvery-th, not in the measured second: its share of
    // an iteration on that schedule is added before the target is compared (the first's probe, compiles included).
    const { collapseEvery } = configs[i];
    const collapsePerIteration = collapseEvery > 0 ? (first.timingsMs.collapse ?? 0) / 1000 / collapseEvery : 0;
    const withCollapse = seconds + collapsePerIteration;
    write(
      JSON.stringify({
        bench: 'iteration',
        case: name,
        model: configs[i].model,
        batch: `${configs[i].envGroups}x${configs[i].groupSize}`,
        overrides: extra,
        seconds: round(seconds),
        collapseSecondsPerIteration: round(collapsePerIteration),
        secondsWithCollapse: round(withCollapse),
        targetSeconds: ITERATION_CASES[name].targetSeconds,
        reached: withCollapse <= ITERATION_CASES[name].targetSeconds,
        stagesSeconds: stages(second.timingsMs),
        peakGflops: round(peakGflops),
        gflop: Object.fromEntries(Object.entries(flops).map(([stage, f]) => [stage, round(f / 1e9, 1000)])),
        floorSeconds: Object.fromEntries(
          Object.entries(flops).map(([stage, f]) => [stage, round(f / (peakGflops * 1e9))]),
        ),
        firstIterationSeconds: round((first.at - start) / 1000),
        firstIterationStagesSeconds: stages(first.timingsMs),
        tokensGenerated: second.metrics[TOKENS_GENERATED] ?? null,
        tokensTrained: second.metrics[KEPT_TOKENS] ?? null,
        load: loads,
      }),
    );
  }
}
