/**
 * Which charts a report has and which metric each line reads: one table (docs/spec.md §5's per-iteration
 * measurements), turned into chart data for any number of runs on the same axes (pure).
 * Metric names are the trainer's (src/rl/metrics.ts, src/rl/update.ts); a metric a run lacks (no critic,
 * no validation this iteration) simply has no point there.
 */
import type { ChartModel, ChartSeries, IterationPoint, RunReport } from './model.ts';
import {
  ACTOR_APPROX_KL,
  ACTOR_CLIP_FRAC,
  ACTOR_GRAD_NORM,
  ACTOR_KL_REF,
  COLLAPSE_MI_ESTIMATE,
  COLLAPSE_MI_UPPER_BOUND,
  COLLAPSE_RETRIEVAL_ACCURACY,
  COLLAPSE_RETRIEVAL_CHANCE_LEVEL,
  CRITIC_GRAD_NORM,
  CRITIC_VALUE_LOSS,
  ENTROPY_MEAN,
  FILTER_IN_GROUP_STD_ALL,
  FILTER_IN_GROUP_STD_KEPT,
  IN_GROUP_STD_ALL,
  IN_GROUP_STD_KEPT,
  RESPONSE_LENGTH_MEAN,
  RETURN_MEAN,
  SUCCESS_RATE,
  VAL_SUCCESS_RATE,
} from '../rl/metric-names.ts';

interface SeriesSpec {
  label: string;
  value: (p: IterationPoint) => number | undefined;
}

interface ChartSpec {
  id: string;
  title: string;
  yLabel: string;
  series: (run: RunReport) => SeriesSpec[];
  /** A constant line per run (the oracle ceiling), or null. */
  reference?: (run: RunReport) => { label: string; y: number } | null;
  yMin?: number;
  yMax?: number;
}

const metric = (label: string, key: string): SeriesSpec => ({ label, value: (p) => p.metrics[key] });
/** The first of several metrics the iteration has (names for the same quantity). */
const firstOf = (label: string, ...keys: string[]): SeriesSpec => ({
  label,
  value: (p) => p.metrics[keys.find((k) => p.metrics[k] !== undefined) ?? keys[0]],
});
const fixed =
  (...series: SeriesSpec[]) =>
  (): SeriesSpec[] =>
    series;

/** Stage names in the order the run's iterations first report them (rollout, score, …, update). */
function stageSeries(run: RunReport): SeriesSpec[] {
  const stages = [...new Set(run.iterations.flatMap((p) => Object.keys(p.timingsMs)))];
  return stages.map((stage) => ({ label: stage, value: (p: IterationPoint) => p.timingsMs[stage] }));
}

export const CHART_SPECS: readonly ChartSpec[] = [
  {
    id: 'success',
    title: 'Success rate',
    yLabel: 'success rate',
    yMin: 0,
    yMax: 1,
    series: fixed(metric('train', SUCCESS_RATE), metric('validation', VAL_SUCCESS_RATE)),
    reference: (run) =>
      run.oracle ? { label: `oracle ceiling (${run.oracle.seeds} val seeds)`, y: run.oracle.successRate } : null,
  },
  { id: 'return', title: 'Return', yLabel: 'trajectory return', series: fixed(metric('mean', RETURN_MEAN)) },
  {
    id: 'in-group-std',
    title: 'In-group return std',
    yLabel: 'std of returns within a group',
    // The filter stage measures both over the rollout batch itself, so its numbers are read first: the
    // iteration's in_group_std/* have at times been recomputed on the kept batch only (all = kept).
    series: fixed(
      firstOf('all groups', FILTER_IN_GROUP_STD_ALL, IN_GROUP_STD_ALL),
      firstOf('kept groups', FILTER_IN_GROUP_STD_KEPT, IN_GROUP_STD_KEPT),
    ),
  },
  { id: 'entropy', title: 'Token entropy', yLabel: 'nats', series: fixed(metric('mean', ENTROPY_MEAN)) },
  {
    id: 'response-length',
    title: 'Response length',
    yLabel: 'tokens per response',
    series: fixed(metric('mean', RESPONSE_LENGTH_MEAN)),
  },
  {
    id: 'grad-norm',
    title: 'Gradient norm',
    yLabel: 'L2 norm before clipping',
    series: fixed(metric('actor', ACTOR_GRAD_NORM), metric('critic', CRITIC_GRAD_NORM)),
  },
  {
    id: 'clip-fraction',
    title: 'Clip fraction',
    yLabel: 'fraction of tokens',
    yMin: 0,
    series: fixed(metric('actor', ACTOR_CLIP_FRAC)),
  },
  {
    id: 'kl',
    title: 'KL',
    yLabel: 'nats per token',
    series: fixed(metric('approx KL (old → new)', ACTOR_APPROX_KL), metric('KL to reference', ACTOR_KL_REF)),
  },
  {
    // RAGEN-2's collapse metrics: whether first-turn responses still depend on the input (src/rl/collapse-metrics.ts).
    id: 'collapse-mi',
    title: 'Mutual information of prompt and response',
    yLabel: 'nats',
    series: fixed(metric('MI estimate', COLLAPSE_MI_ESTIMATE), metric('upper bound log N', COLLAPSE_MI_UPPER_BOUND)),
  },
  {
    id: 'collapse-retrieval',
    title: 'Retrieval accuracy of the prompt from the response',
    yLabel: 'accuracy',
    yMin: 0,
    yMax: 1,
    series: fixed(metric('accuracy', COLLAPSE_RETRIEVAL_ACCURACY), metric('chance', COLLAPSE_RETRIEVAL_CHANCE_LEVEL)),
  },
  {
    id: 'value-loss',
    title: 'Value loss',
    yLabel: 'critic loss',
    series: fixed(metric('critic', CRITIC_VALUE_LOSS)),
  },
  { id: 'stage-timings', title: 'Stage timings', yLabel: 'ms per iteration', yMin: 0, series: stageSeries },
];

function pointsOf(run: RunReport, spec: SeriesSpec): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const p of run.iterations) {
    const y = spec.value(p);
    if (y !== undefined && Number.isFinite(y)) out.push([p.iteration, y]);
  }
  return out;
}

/** A constant line across the run's completed iterations (a single point at 0 before any completes). */
function referenceOf(run: RunReport, spec: ChartSpec, prefix: string): ChartSeries[] {
  const ref = spec.reference?.(run);
  if (!ref) return [];
  const first = run.iterations[0]?.iteration ?? 0;
  const last = Math.max(run.lastIteration, first);
  return [
    {
      run: run.runId,
      label: prefix + ref.label,
      points: [
        [first, ref.y],
        [last, ref.y],
      ],
      kind: 'reference',
    },
  ];
}

/**
 * One reference line for all runs when every run has the same one (a seed sweep on one environment shares its
 * oracle ceiling): drawn once, under no run, across all their iterations, instead of once per run.
 */
function sharedReference(spec: ChartSpec, runs: readonly RunReport[]): ChartSeries | null {
  const refs = runs.map((run) => spec.reference?.(run) ?? null);
  const first = refs[0];
  if (runs.length < 2 || !first || refs.some((r) => r?.label !== first.label || r.y !== first.y)) return null;
  const lines = runs.flatMap((run) => referenceOf(run, spec, ''));
  const from = Math.min(...lines.map((l) => l.points[0]![0]));
  const to = Math.max(...lines.map((l) => l.points[1]![0]));
  return {
    run: '',
    label: first.label,
    points: [
      [from, first.y],
      [to, first.y],
    ],
    kind: 'reference',
  };
}

function chartOf(spec: ChartSpec, runs: readonly RunReport[]): ChartModel {
  const many = runs.length > 1;
  const shared = sharedReference(spec, runs);
  const series = runs.flatMap((run) => {
    const prefix = many ? `${run.runId} · ` : '';
    const lines = spec.series(run).map((s): ChartSeries => ({
      run: run.runId,
      label: prefix + s.label,
      points: pointsOf(run, s),
      kind: 'line',
    }));
    return [...lines, ...(shared ? [] : referenceOf(run, spec, prefix))];
  });
  if (shared) series.push(shared);
  const markers = runs.flatMap((run) => [
    ...run.warnings.map((w) => ({ run: run.runId, iteration: w.iteration, message: w.message })),
    ...run.forks.map((f) => ({
      run: run.runId,
      iteration: f.fromIteration,
      message: `fork → ${f.lineageId}: ${f.reason}`,
    })),
  ]);
  return {
    id: spec.id,
    title: spec.title,
    yLabel: spec.yLabel,
    series,
    markers,
    ...(spec.yMin !== undefined && { yMin: spec.yMin }),
    ...(spec.yMax !== undefined && { yMax: spec.yMax }),
  };
}

export function buildCharts(runs: readonly RunReport[]): ChartModel[] {
  return CHART_SPECS.map((spec) => chartOf(spec, runs));
}
