/**
 * `starpo bench learning-seeds`: the item 4 — StarPO-S, vanilla StarPO and GRPO with 3 training
 * seeds each, same budget: models from scratch on Sokoban and FrozenLake from the format-only warm start, and the
 * pretrained SmolLM2 on Bandit, BanditReversed and FrozenLake (SEED_STUDY). One `learning` line
 * per run (learning.ts), then one `learning-seeds` summary line per (environment, algorithm): final
 * validation success mean ± std over the seeds, the runs that collapsed and when, and the Echo-Trap
 * firings, plus the `starpo report` command that draws them side by side.
 *
 * Collapsed: the run's validation success fell below half of the best it had reached (after reaching at
 * least 0.1), and was still there at the end; "when" is the first validation iteration of that fall.
 */
import { mean, sampleStd } from '../rl/stats.ts';
import { pickNames } from './name-list.ts';
import { seedStudyCases, SEED_STUDY } from './learning-cases.ts';
import { benchSetOverrides, checkCases, measureCase, trainCase, useTinyMode, type CasePoint } from './learning.ts';

/** The iteration a run's final collapse began (see the module comment), or null. */
export function collapsedAt(curve: readonly CasePoint[]): number | null {
  const val = curve.filter((p) => p.val !== undefined) as Array<CasePoint & { val: number }>;
  let best = 0;
  let fellAt: number | null = null;
  for (const p of val) {
    if (p.val > best) [best, fellAt] = [p.val, null];
    else if (best >= 0.1 && p.val < best / 2) fellAt ??= p.iteration;
    else fellAt = null;
  }
  return fellAt;
}

interface SeedRun {
  seed: number;
  /** The budget every run of one environment shares: iterations of envGroups × groupSize, lrActor. */
  budget: Record<string, unknown>;
  /** The environment as run (the study's `frozenlake` is FrozenLake without slipping) and its env-spec id. */
  env: string;
  envSpecId: string;
  valSuccess: number;
  collapsedAt: number | null;
  echoTrapWarnings: number[];
  runDir: string;
}

function summary(study: string, preset: string, runs: readonly SeedRun[]): Record<string, unknown> {
  const finals = runs.map((r) => r.valSuccess);
  return {
    bench: 'learning-seeds',
    study,
    env: runs[0]?.env,
    envSpecId: runs[0]?.envSpecId,
    preset,
    ...runs[0]?.budget,
    seeds: runs.map((r) => r.seed),
    valSuccessMean: Number(mean(finals).toFixed(4)),
    valSuccessStd: Number(sampleStd(finals).toFixed(4)),
    collapsed: runs.filter((r) => r.collapsedAt !== null).map((r) => ({ seed: r.seed, at: r.collapsedAt })),
    echoTrapFirings: runs.map((r) => ({ seed: r.seed, at: r.echoTrapWarnings })),
    report: `npx starpo report ${runs.map((r) => r.runDir).join(' ')} --png`,
  };
}

/**
 * `envs` / `presets` / `seeds` (comma-separated) run part of the study, e.g. one preset per process so that a
 * machine's cores run the presets side by side, or one seed per session; a summary line covers the seeds run.
 * STARPO_BENCH_SET changes the budget of every run (e.g. `envGroups=128`), which the summary then names.
 */
export async function benchLearningSeeds(
  opts: { tiny?: boolean; envs?: string; presets?: string; seeds?: string } = {},
  write = console.log,
): Promise<void> {
  useTinyMode(opts.tiny || process.env.STARPO_BENCH_TINY === '1');
  const cases = seedStudyCases();
  const envs = pickNames('envs', 'environments', opts.envs, SEED_STUDY.envs);
  const presets = pickNames('presets', 'presets', opts.presets, SEED_STUDY.presets);
  const seedNames = pickNames('seeds', 'seeds', opts.seeds, SEED_STUDY.seeds.map(String));
  const seeds = SEED_STUDY.seeds.filter((s) => seedNames.includes(String(s)));
  const caseOf = (env: string, preset: string, seed: number) =>
    cases.find((c) => c.name === `seeds-${env}-${preset}-s${seed}`)!;
  checkCases(
    envs.flatMap((env) => presets.flatMap((preset) => seeds.map((seed) => caseOf(env, preset, seed)))),
    benchSetOverrides(),
  );
  for (const env of envs) {
    for (const preset of presets) {
      const runs: SeedRun[] = [];
      for (const seed of seeds) {
        const k = caseOf(env, preset, seed);
        const trained = await trainCase(k, benchSetOverrides());
        const line = await measureCase(k, trained);
        write(JSON.stringify(line));
        runs.push({
          seed,
          budget: {
            iterations: line.iterations,
            envGroups: line.envGroups,
            groupSize: line.groupSize,
            lrActor: line.lrActor,
          },
          env: line.env as string,
          envSpecId: line.envSpecId as string,
          valSuccess: line.valSuccess as number,
          collapsedAt: collapsedAt(trained.curve),
          echoTrapWarnings: line.echoTrapWarnings as number[],
          runDir: trained.runDir,
        });
      }
      write(JSON.stringify(summary(env, preset, runs)));
    }
  }
}
