/**
 * A finished run's iteration, for the scripts that rerun a stage on a run's own data (profile-update.ts,
 * profile-collapse.ts): the run's location, its config with STARPO_BENCH_SET's overrides, and the iteration's
 * trajectory events and FLOPs (bench/run-flops.ts). `refuse` reports an unreadable run or a missing iteration.
 * The modules load when it is called, after the caller has set STARPO_ORT_PROFILE.
 */
import path from 'node:path';

export async function loadRunIteration(runDir: string, iteration: number, refuse: (message: string) => never) {
  const { runIterationFlops } = await import('../src/bench/run-flops.ts');
  const { benchSetOverrides } = await import('../src/bench/learning.ts');
  const { readRunConfig, runLocation } = await import('../src/run/location.ts');
  const { resolveConfig } = await import('../src/rl/config.ts');
  const loc = runLocation(path.basename(runDir), path.dirname(runDir));
  const stored = await readRunConfig(loc).catch((err: Error) => refuse(err.message));
  const extra = benchSetOverrides();
  const c = extra.length ? resolveConfig({ file: stored, overrides: extra }) : stored;
  const found = (await runIterationFlops(loc.root, loc.runId, c)).find((i) => i.event.iteration === iteration);
  if (!found) return refuse(`run ${loc.runId} has no iteration ${iteration}`);
  return { loc, c, ...found };
}
