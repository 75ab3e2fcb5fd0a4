/**
 * `starpo bench tools`: a tiny model trained from scratch on large-number products (toolmath-multiply),
 * warm-started on demonstrations and then trained with RL, three ways under the same budget (tokens per
 * answer, warm-start steps, iterations, seeds; the two tool runs share one warm-start):
 *   no-tools           the demonstrations write the answer directly; plain correctness reward (ToRL ±1)
 *   tools-correctness  code-inline calls to the sandbox; the demonstrations over-call (1–3 runs of the
 *                      solution, as untuned models do); plain correctness reward
 *   tools-otc          the same, rewarded with OTC (correctness × tool efficiency within the group)
 * and two comparisons: accuracy with vs without tools, and OTC vs plain correctness (tool calls per
 * correct answer should fall while accuracy stays within 2 points). JSON lines; a benchmark, not a test.
 */
import { pickNames } from './name-list.ts';
import { trainCase, type TrainedCase, type WarmStart } from './learning.ts';
import type { PresetName } from '../rl/presets.ts';
import { TOOL_CALLS_PER_RESPONSE, TOOL_PRODUCTIVITY, VAL_SUCCESS_RATE, valMetric } from '../rl/metric-names.ts';

/** Same model, budget and warm-start length for every case; only the tools differ. */
const SETUP = [
  'env=toolmath-multiply',
  'template=compact',
  'valEvery=5',
  'valSeeds=256',
  'threads=0',
  'modelHidden=96',
  'modelFfn=256',
  'modelContext=512',
  'maxResponseTokens=256',
  'sftSteps=600',
  'sftEpisodes=2000',
  'sftExtraToolCalls=2',
  'toolMaxCalls=4',
];
const RL = ['iterations=30', 'envGroups=8', 'groupSize=8', 'miniBatchSize=32', 'lrActor=1e-4', 'klCoef=0'];
const WITH_TOOLS: WarmStart = { name: 'toolmath-tools', overrides: [...SETUP, 'tools=code-inline'] };
const WITHOUT_TOOLS: WarmStart = { name: 'toolmath-plain', overrides: [...SETUP, 'tools=none'] };

export const TOOL_CASES: { name: string; preset: PresetName; overrides: string[]; warmStart: WarmStart }[] = [
  { name: 'no-tools', preset: 'grpo', warmStart: WITHOUT_TOOLS, overrides: [...RL, 'toolReward=torl'] },
  // One warm-start for both tool runs: the comparison is of the RL reward alone.
  { name: 'tools-correctness', preset: 'grpo', warmStart: WITH_TOOLS, overrides: [...RL, 'toolReward=torl'] },
  { name: 'tools-otc', preset: 'grpo', warmStart: WITH_TOOLS, overrides: [...RL, 'toolReward=otc'] },
];

interface ToolResult {
  accuracy: number;
  callsPerResponse: number;
  /** Tool calls run per correct answer (1 / productivity); null without a correct answer. */
  callsPerCorrect: number | null;
}

/** The last validation's accuracy and tool use. */
function lastValidation(t: TrainedCase): ToolResult & { iteration: number } {
  const last = [...t.reports].reverse().find((r) => r.metrics[VAL_SUCCESS_RATE] !== undefined);
  const m = last?.metrics ?? {};
  const productivity = m[valMetric(TOOL_PRODUCTIVITY)] ?? 0;
  return {
    iteration: last?.iteration ?? 0,
    accuracy: m[VAL_SUCCESS_RATE] ?? 0,
    callsPerResponse: m[valMetric(TOOL_CALLS_PER_RESPONSE)] ?? 0,
    callsPerCorrect: productivity > 0 ? 1 / productivity : null,
  };
}

export async function benchTools(only = process.env.STARPO_BENCH_CASES): Promise<void> {
  const known = TOOL_CASES.map((k) => k.name);
  const names = pickNames('cases', 'tool cases', only || undefined, known);
  const results = new Map<string, ToolResult>();
  for (const k of TOOL_CASES.filter((c) => names.includes(c.name))) {
    const trained = await trainCase(k);
    const final = lastValidation(trained);
    results.set(k.name, final);
    const curve = trained.reports
      .filter((r) => r.metrics[VAL_SUCCESS_RATE] !== undefined)
      .map((r) => ({
        iteration: r.iteration,
        accuracy: r.metrics[VAL_SUCCESS_RATE],
        callsPerResponse: r.metrics[valMetric(TOOL_CALLS_PER_RESPONSE)] ?? 0,
        trainCallsPerResponse: r.metrics[TOOL_CALLS_PER_RESPONSE] ?? 0,
      }));
    console.log(
      JSON.stringify({
        bench: 'tools',
        case: k.name,
        tools: trained.config.tools,
        reward: trained.config.toolReward,
        wallSeconds: Math.round(trained.wallSeconds),
        warmStart: k.warmStart.name,
        warmStartSeconds: Math.round(trained.warmStartSeconds ?? 0),
        ...final,
        runDir: trained.runDir,
        curve,
      }),
    );
  }
  const [none, plain, otc] = ['no-tools', 'tools-correctness', 'tools-otc'].map((n) => results.get(n));
  if (none && plain) {
    console.log(
      JSON.stringify({
        bench: 'tools',
        comparison: 'with-vs-without-tools',
        accuracyWithTools: plain.accuracy,
        accuracyWithoutTools: none.accuracy,
        reached: plain.accuracy > none.accuracy,
      }),
    );
  }
  if (plain && otc) {
    const gapPoints = 100 * (otc.accuracy - plain.accuracy);
    const fewer =
      otc.callsPerCorrect !== null && plain.callsPerCorrect !== null && otc.callsPerCorrect < plain.callsPerCorrect;
    console.log(
      JSON.stringify({
        bench: 'tools',
        comparison: 'otc-vs-correctness',
        callsPerCorrect: { correctness: plain.callsPerCorrect, otc: otc.callsPerCorrect },
        accuracy: { correctness: plain.accuracy, otc: otc.accuracy },
        accuracyGapPoints: gapPoints,
        reached: fewer && gapPoints >= -2,
      }),
    );
  }
}
